package topgg_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

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
	require.Contains(t, fmt.Sprint(l), "redacted")
}
