package topgg_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestTokenNeverShown runs calls that succeed, retry, hit 429s, fail to decode,
// lose their connection or find no server, with a debug-level JSON logger, and
// checks that the token appears in no error, no log line and no formatting.
func TestTokenNeverShown(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	token := srv.Token()
	var logs logBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClient(t, srv, topgg.WithLogger(logger))
	l := c.Legacy()
	bot := srv.Project().PlatformID
	ctx := t.Context()

	var errs []error
	collect := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	_, err := c.Project(ctx)
	require.NoError(t, err)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Status: 500}))
	_, err = c.Project(ctx)
	require.NoError(t, err)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Status: 429, Body: `{"retry-after": 0.05}`}))
	_, err = c.Project(ctx)
	require.NoError(t, err)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/metrics", RetryAfter: time.Hour}))
	collect(c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1)}))
	collect(c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1)})) // local block
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes/*", Status: 200, Body: `{"created_at": 1}`}))
	_, err = c.VoteStatus(ctx, "1", "")
	collect(err)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/announcements", Drop: true}))
	_, err = c.PostAnnouncement(ctx, topgg.NewAnnouncement{Title: "Hi there", Content: "An announcement."})
	collect(err)
	require.NoError(t, srv.Inject(topggtest.Fault{Status: 503, Times: 10}))
	_, err = c.Votes(ctx, topgg.VotesQuery{StartDate: time.Now().Add(-time.Hour)})
	collect(err)
	_, err = l.Bot(ctx, "999999999999999999")
	collect(err)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/bots/*", RetryAfter: time.Hour}))
	_, err = l.Stats(ctx, bot)
	collect(err)
	_, err = l.Bot(ctx, "bad id")
	collect(err)
	ctxCancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.Project(ctxCancelled)
	collect(err)

	// Transport failures, with the same token, to a closed port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String() + "/api"
	require.NoError(t, ln.Close())
	deadClient, err := topgg.New(token, topgg.WithBaseURL(dead), topgg.WithLogger(logger), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	_, err = deadClient.Project(ctx)
	collect(err)
	_, err = deadClient.Legacy().Stats(ctx, bot)
	collect(err)
	// Refused by New: the token must not be echoed back either.
	_, err = topgg.New(token + "\x01")
	collect(err)
	_, err = topgg.New(token, topgg.WithBaseURL("http://example.com"))
	collect(err)

	require.GreaterOrEqual(t, len(errs), 12)
	secrets := []string{token}
	for part := range strings.SplitSeq(token, ".") {
		if len(part) >= 8 {
			secrets = append(secrets, part)
		}
	}
	for _, err := range errs {
		for _, verb := range []string{"%v", "%+v", "%s", "%q"} {
			s := fmt.Sprintf(verb, err)
			for _, secret := range secrets {
				require.NotContains(t, s, secret, "error %T under %s", err, verb)
			}
		}
	}

	out := logs.String()
	require.Contains(t, out, `"level":"DEBUG"`, "the run must have logged at debug level")
	require.Contains(t, out, "retrying")
	require.Contains(t, out, "rate limited")
	for _, secret := range secrets {
		require.NotContains(t, out, secret)
	}
	require.NotContains(t, out, "Bearer")

	for _, v := range []any{c, l, *l, reflect.ValueOf(c).Elem().Interface(), deadClient} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			s := fmt.Sprintf(verb, v)
			for _, secret := range secrets {
				require.NotContains(t, s, secret, "%T under %s", v, verb)
			}
		}
	}
	require.Contains(t, fmt.Sprint(c), "redacted")
}

func project(ctx context.Context, c *topgg.Client) error {
	_, err := c.Project(ctx)
	return err
}

// secretsOf lists what must never be shown of token: itself, "Bearer <token>",
// and its long parts (a service may quote only the signature).
func secretsOf(token string) []string {
	out := []string{token, "Bearer " + token}
	for part := range strings.SplitSeq(token, ".") {
		if len(part) >= 8 {
			out = append(out, part)
		}
	}
	return out
}

// requireNoSecret checks err under every fmt verb, and every field of every error
// of this package in its chain where the service's words are kept.
func requireNoSecret(t *testing.T, token string, err error) {
	t.Helper()
	require.Error(t, err)
	shown := []string{}
	for _, verb := range []string{"%v", "%+v", "%s", "%q", "%#v", "%x", "%X"} {
		shown = append(shown, fmt.Sprintf(verb, err))
	}
	var apiErr *topgg.APIError
	if errors.As(err, &apiErr) {
		shown = append(shown, string(apiErr.Body), apiErr.Type, apiErr.Title, apiErr.Detail, apiErr.Hint,
			fmt.Sprintf("%+v", *apiErr), fmt.Sprintf("%#v", *apiErr))
	}
	var de *topgg.DecodeError
	if errors.As(err, &de) {
		shown = append(shown, string(de.Body), de.Err.Error(), fmt.Sprintf("%+v", *de), fmt.Sprintf("%#v", de.Err))
	}
	var re *topgg.RequestError
	if errors.As(err, &re) {
		shown = append(shown, re.Err.Error(), fmt.Sprintf("%#v", re.Err))
	}
	var rl *topgg.RateLimitError
	if errors.As(err, &rl) {
		shown = append(shown, fmt.Sprintf("%+v", *rl))
	}
	for _, s := range shown {
		for _, secret := range secretsOf(token) {
			require.NotContains(t, s, secret)
			require.NotContains(t, s, fmt.Sprintf("%x", secret))
		}
	}
}

// TestEchoedTokenRedacted: a service that quotes the Authorization header back,
// in every error shape, puts the token in no error, no field and no log line.
func TestEchoedTokenRedacted(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	token := srv.Token()
	logs := &logBuffer{}
	c := newClient(t, srv, topgg.WithLogger(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	echo := "{{authorization}}"
	long := strings.Repeat("x", 4<<10-40)
	ctx := t.Context()

	for _, tc := range []struct {
		name  string
		fault topggtest.Fault
		call  func(context.Context, *topgg.Client) error
	}{
		// An unusable Retry-After is logged (once): scrubbed, even cut short.
		{"Retry-After header", topggtest.Fault{Path: "/v1/projects/@me", Status: 400, Header: map[string]string{"Retry-After": echo}},
			project},
		{"v1 problem+json", topggtest.Fault{Path: metricsPath, Status: 400, ContentType: "application/problem+json",
			Body: `{"type":"about:blank#` + echo + `","title":"Bad ` + echo + `","status":400,"detail":"got ` + echo + `"}`},
			metrics(topgg.BotMetrics{ServerCount: new(1)})},
		{"v1 problem+json, JSON-escaped", topggtest.Fault{Path: metricsPath, Status: 422, Body: `{"detail":"got \u0042earer ` + echo + `"}`},
			metrics(topgg.BotMetrics{ServerCount: new(1)})},
		{"v0 error", topggtest.Fault{Path: "/bots*", Status: 401, Body: `{"error":"` + echo + `","message":"` + echo + `"}`},
			legacy(func(ctx context.Context, l *topgg.Legacy) error {
				_, err := l.Stats(ctx, srv.Project().PlatformID)
				return err
			})},
		{"plain text, retried", topggtest.Fault{Path: "/v1/projects/@me", Status: 500, Times: 4, ContentType: "text/plain", Body: "Authorization: " + echo},
			project},
		{"cut in the middle of the token", topggtest.Fault{Path: "/v1/projects/@me", Status: 409, ContentType: "text/plain", Body: long + echo + long},
			project},
		{"429 body", topggtest.Fault{Path: "/v1/projects/@me/votes*", Status: 429, Body: `{"retry-after":3600,"detail":"` + echo + `"}`},
			voteStatus("1", "")},
		{"503 with a long wait", topggtest.Fault{Path: "/v1/projects/@me/commands", Status: 503, RetryAfter: time.Hour, Body: `{"detail":"` + echo + `"}`},
			commands()},
		{"decode failure", topggtest.Fault{Path: "/bots*", Status: 200, Body: `{"results": ` + echo + `}`},
			legacy(func(ctx context.Context, l *topgg.Legacy) error {
				_, err := l.SearchBots(ctx, topgg.BotQuery{})
				return err
			})},
		{"decode failure quoting a field", topggtest.Fault{Path: "/v1/projects/@me/announcements", Status: 200, Body: `{"title":"x","created_at":"` + echo + `"}`},
			func(ctx context.Context, c *topgg.Client) error {
				_, err := c.PostAnnouncement(ctx, topgg.NewAnnouncement{Title: "Hello", Content: "An announcement."})
				return err
			}},
	} {
		require.NoError(t, srv.Inject(tc.fault))
		err := tc.call(ctx, c)
		require.Error(t, err, tc.name)
		requireNoSecret(t, token, err)
		require.Zero(t, srv.PendingFaults(), tc.name)
	}
	// The service's words are kept, only the token is gone.
	require.NoError(t, srv.Inject(topggtest.Fault{Path: metricsPath, Status: 400, Body: `{"detail":"got ` + echo + `"}`}))
	err := c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1)})
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, "got Bearer [redacted]", apiErr.Detail)

	out := logs.String()
	require.Contains(t, out, `"level":"DEBUG"`)
	require.Contains(t, out, "retrying")
	require.Contains(t, out, `"retry_after":"Bearer [redacted]`, "the unusable Retry-After is logged, scrubbed")
	for _, secret := range secretsOf(token) {
		require.NotContains(t, out, secret)
	}
}

// TestMalformedAnswerQuotingTheToken: a transport error that quotes the answer's
// bytes (a malformed status line) does not carry the token either.
func TestMalformedAnswerQuotingTheToken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	const token = "eyJhbGciOiJIUzI1NiJ9.eyJfdCI6IiIsImlkIjoiMSJ9.c2VjcmV0LXNpZ25hdHVyZS12YWx1ZQ"
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			// Read the request head, then answer a status line that quotes its
			// Authorization header.
			r := bufio.NewReader(conn)
			req, err := http.ReadRequest(r)
			if assert.NoError(t, err) {
				_, _ = fmt.Fprintf(conn, "HTTP/1.1 %s OK\r\nContent-Length: 0\r\n\r\n", strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer "))
			}
			_ = conn.Close()
		}
	}()
	c, err := topgg.New(token, topgg.WithBaseURL("http://"+ln.Addr().String()+"/api"), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	_, err = c.Project(t.Context())
	var re *topgg.RequestError
	require.ErrorAs(t, err, &re)
	require.Contains(t, err.Error(), "malformed", "the cause is still told")
	requireNoSecret(t, token, err)
	_ = ln.Close()
	<-done
}
