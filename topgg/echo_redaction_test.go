package topgg_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

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
		shown = append(shown, string(apiErr.Body), apiErr.Type, apiErr.Title, apiErr.Detail, apiErr.Message, apiErr.Hint,
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
