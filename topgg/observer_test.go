package topgg_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

func TestObserverSeesEveryAttempt(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var rec testkit.Log[topgg.Request] // what the Observer is told
	c := newClient(t, srv, topgg.WithObserver(rec.Add))
	ctx := context.Background()

	// A 429 then the success of the retry: two attempts of one call.
	require.NoError(t, srv.Inject(topggtest.Fault{Method: "PATCH", Path: "/v1/projects/@me/metrics", Status: http.StatusTooManyRequests, RetryAfter: time.Millisecond}))
	require.NoError(t, c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(3)}))
	_, err := c.Legacy().Bot(ctx, topggtest.DiscordBot().PlatformID)
	require.NoError(t, err)
	st, err := c.VoteStatus(ctx, "800506814562787328", "")
	require.NoError(t, err)
	require.Nil(t, st) // the 404 that means "none" is a success

	got := rec.All()
	require.Len(t, got, 4)
	require.Equal(t, "PATCH /v1/projects/@me/metrics", got[0].Route)
	require.Equal(t, 1, got[0].Attempt)
	require.Equal(t, http.StatusTooManyRequests, got[0].Status)
	require.IsType(t, &topgg.RateLimitError{}, got[0].Err)
	require.Equal(t, 2, got[1].Attempt)
	require.NoError(t, got[1].Err)
	require.Positive(t, got[1].Duration)
	require.Equal(t, "GET /bots/:bot_id", got[2].Route)
	require.Equal(t, "GET /v1/projects/@me/votes/:user_id", got[3].Route)
	require.Equal(t, http.StatusNotFound, got[3].Status)
	require.NoError(t, got[3].Err)
}

func TestObserverOutcomes(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var rec testkit.Log[topgg.Request] // what the Observer is told
	c := newClient(t, srv, topgg.WithObserver(rec.Add), topgg.WithRetryPolicy(topgg.NoRetries()))
	ctx := context.Background()

	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Status: http.StatusInternalServerError}))
	_, err := c.Project(ctx)
	require.Error(t, err)
	// A long block: the next call of the family is refused without a request.
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/commands", RetryAfter: time.Hour}))
	require.Error(t, c.SetCommands(ctx, nil))
	require.Error(t, c.SetCommands(ctx, nil))
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/metrics/batch", Drop: true, Times: 2}))
	require.Error(t, c.PostMetricsBatch(ctx, []topgg.MetricsSample{{Metrics: topgg.BotMetrics{ServerCount: new(1)}}}))
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Status: http.StatusOK, Body: "{not json"}))
	_, err = c.Project(ctx)
	require.Error(t, err)

	got := rec.All()
	require.Len(t, got, 5)
	want := []struct {
		route  string
		status int
		err    error // its type
	}{
		{"GET /v1/projects/@me", 500, &topgg.APIError{}},
		{"PUT /v1/projects/@me/commands", 429, &topgg.RateLimitError{}},
		{"PUT /v1/projects/@me/commands", 0, &topgg.RateLimitError{}},
		{"POST /v1/projects/@me/metrics/batch", 0, &topgg.RequestError{}},
		{"GET /v1/projects/@me", 200, &topgg.DecodeError{}},
	}
	for i, w := range want {
		require.Equal(t, w.route, got[i].Route, "attempt %d", i)
		require.Equal(t, w.status, got[i].Status, "attempt %d", i)
		require.IsType(t, w.err, got[i].Err, "attempt %d: %v", i, got[i].Err)
	}
	var rl *topgg.RateLimitError
	require.ErrorAs(t, got[2].Err, &rl)
	require.True(t, rl.Local, "refused without a request")
	require.Zero(t, got[2].Duration)
}

func TestObserverNotToldOfAStop(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var rec testkit.Log[topgg.Request] // what the Observer is told
	c := newClient(t, srv, topgg.WithObserver(rec.Add))
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Delay: time.Minute}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Project(ctx); done <- err }()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Empty(t, rec.All())
}

func TestObserversInOrder(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var order []string
	var mu sync.Mutex
	add := func(name string) topgg.Option {
		return topgg.WithObserver(func(topgg.Request) { mu.Lock(); order = append(order, name); mu.Unlock() })
	}
	c := newClient(t, srv, add("a"), add("b"))
	_, err := c.Project(context.Background())
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"a", "b"}, order)
}

func TestWithObserverNil(t *testing.T) {
	t.Parallel()
	_, err := topgg.New("token", topgg.WithObserver(nil))
	require.Error(t, err)
}

// Every method of the client names its own route, a pattern without ids, one
// of Routes.
func TestObserverRoutesCarryNoIDs(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var rec testkit.Log[topgg.Request] // what the Observer is told
	c := newClient(t, srv, topgg.WithObserver(rec.Add), topgg.WithRetryPolicy(topgg.NoRetries()))
	ctx, bot, user := t.Context(), srv.Project().PlatformID, "146183080879613966"
	one := 1
	_, _ = c.Project(ctx)
	_ = c.UpdateProject(ctx, topgg.ProjectUpdate{Headline: map[string]string{"en": "A headline"}})
	_ = c.SetCommands(ctx, nil)
	_ = c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: &one})
	_ = c.PostMetricsBatch(ctx, []topgg.MetricsSample{{Metrics: topgg.BotMetrics{ServerCount: &one}}})
	_, _ = c.PostAnnouncement(ctx, topgg.NewAnnouncement{Title: "v2 is out", Content: "Slash commands everywhere."})
	_, _ = c.Votes(ctx, topgg.VotesQuery{StartDate: time.Now().Add(-time.Hour)})
	_, _ = c.VoteStatus(ctx, user, "")
	l := c.Legacy()
	_, _ = l.SearchBots(ctx, topgg.BotQuery{})
	_, _ = l.Bot(ctx, bot)
	_, _ = l.Voters(ctx, bot)
	_, _ = l.Stats(ctx, bot)
	_ = l.PostStats(ctx, bot, topgg.BotStats{ServerCount: 1})
	_, _ = l.HasVoted(ctx, bot, user)
	routes := map[string]bool{}
	for _, r := range rec.All() {
		require.Regexp(t, `^(GET|POST|PUT|PATCH) (/v1/projects/@me|/bots)[a-z/:_]*$`, r.Route)
		routes[r.Route] = true
	}
	require.Len(t, routes, 14, "%v", routes)
	// Routes lists exactly the routes the methods call.
	require.ElementsMatch(t, slices.Collect(maps.Keys(routes)), topgg.Routes())
}

// A refused token is remembered until an answer accepts it, and logged once
// per spell at error level with what to check, however often it is refused.
func TestTokenRefusedOncePerSpell(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var logs logBuffer
	c := newClient(t, srv, topgg.WithLogger(logs.Logger()))
	ctx := context.Background()
	require.NoError(t, c.TokenRefused())

	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/*", Status: http.StatusUnauthorized, Times: 3}))
	for range 3 {
		err := c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1)})
		require.ErrorIs(t, err, topgg.ErrUnauthorized)
	}
	refused := c.TokenRefused()
	require.ErrorIs(t, refused, topgg.ErrUnauthorized)
	var api *topgg.APIError
	require.True(t, errors.As(refused, &api))
	require.Equal(t, http.StatusUnauthorized, api.StatusCode)
	require.Equal(t, 1, strings.Count(logs.String(), "level=ERROR"), logs.String())
	require.Contains(t, logs.String(), "Top.gg refused the token")
	require.Contains(t, logs.String(), "check=")
	require.NotContains(t, logs.String(), srv.Token())

	// A v0 success does not clear a v1 refusal.
	_, err := c.Legacy().Bot(ctx, topggtest.DiscordBot().PlatformID)
	require.NoError(t, err)
	require.Error(t, c.TokenRefused())

	require.NoError(t, c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1)}))
	require.NoError(t, c.TokenRefused())
	require.Contains(t, logs.String(), "Top.gg accepts the token again")

	// A new spell is logged again.
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/*", Status: http.StatusUnauthorized}))
	require.Error(t, c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1)}))
	require.Equal(t, 2, strings.Count(logs.String(), "level=ERROR"), logs.String())
}

func TestTokenRefusedLegacy(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/bots*", Status: http.StatusUnauthorized}))
	_, err := c.Legacy().Bot(ctx, topggtest.DiscordBot().PlatformID)
	require.ErrorIs(t, err, topgg.ErrUnauthorized)
	require.ErrorIs(t, c.TokenRefused(), topgg.ErrUnauthorized)
	_, err = c.Project(ctx) // v1 accepted: the v0 refusal stays
	require.NoError(t, err)
	require.Error(t, c.TokenRefused())
	_, err = c.Legacy().Bot(ctx, topggtest.DiscordBot().PlatformID)
	require.NoError(t, err)
	require.NoError(t, c.TokenRefused())
}

// A panicking observer is contained: the call returns its own answer, the
// observers after it are still told, and the log says which hook panicked.
func TestObserverPanicIsContained(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var rec testkit.Log[topgg.Request] // what the Observer is told
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, nil))
	c := newClient(t, srv, topgg.WithLogger(log), topgg.WithObserver(func(topgg.Request) { panic("observer bug") }),
		topgg.WithObserver(rec.Add))
	_, err := c.Project(context.Background())
	require.NoError(t, err)
	require.Len(t, rec.All(), 1)
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, logs.String(), "Observer panicked")
	require.Contains(t, logs.String(), "observer bug")
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestObserverPanicIsContainedAcrossRetries: a panicking Observer neither
// fails the call it watches (nor its retry) nor keeps the next observer from hearing of it; the
// log names the observer each time, with the stack once.
func TestObserverPanicIsContainedAcrossRetries(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	logger, logs := warnLogs()
	var rec testkit.Log[topgg.Request] // what the Observer is told
	c := newClient(t, srv, topgg.WithLogger(logger),
		topgg.WithObserver(func(topgg.Request) { panic("metrics bug") }),
		topgg.WithObserver(rec.Add))
	srv.Inject(topggtest.Fault{Method: http.MethodPatch, Path: metricsPath, Status: http.StatusServiceUnavailable})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(4)}))
	got := rec.All()
	require.Len(t, got, 2, "both attempts reached the second observer")
	assert.NoError(t, got[1].Err)
	assert.Equal(t, 2, strings.Count(logs.String(), "Observer panicked"))
	assert.Contains(t, logs.String(), "metrics bug")
	assert.Equal(t, 1, strings.Count(logs.String(), "[running]"), "the stack, once")
}

// With a debug logger, each attempt is one line: its method, route (no id),
// attempt, status or error and time; never the token, nor a body whole.
func TestDebugLogLinePerAttempt(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var buf logBuffer
	c := newClient(t, srv, topgg.WithLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	ctx := t.Context()
	require.NoError(t, srv.Inject(topggtest.Fault{Method: http.MethodPatch, Path: metricsPath, Status: http.StatusServiceUnavailable,
		Body: `{"detail":"busy","trace":"the-rest-of-the-body"}`}))
	require.NoError(t, c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(4)}))
	bot := topggtest.DiscordBot().PlatformID
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/bots/" + bot, Drop: true, Times: 8}))
	_, err := c.Legacy().Bot(ctx, bot, "id")
	require.Error(t, err)

	var got []map[string]any
	for line := range strings.Lines(buf.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if m["msg"] == "request" {
			require.Equal(t, "DEBUG", m["level"], line)
			require.Contains(t, m, "took", line)
			delete(m, "took")
			delete(m, "time")
			got = append(got, m)
		}
	}
	require.Len(t, got, 2+4, buf.String()) // a 503 and its retry, then 4 attempts with no answer (net/http retries a drop once)
	require.Equal(t, map[string]any{"level": "DEBUG", "msg": "request", "component": "topgg", "method": "PATCH", "route": metricsPath,
		"attempt": 1.0, "status": 503.0, "error": "topgg: PATCH /v1/projects/@me/metrics: 503 Service Unavailable: busy"}, got[0])
	require.Equal(t, map[string]any{"level": "DEBUG", "msg": "request", "component": "topgg", "method": "PATCH", "route": metricsPath,
		"attempt": 2.0, "status": 204.0}, got[1])
	for i, m := range got[2:] {
		require.Equal(t, "/bots/:bot_id", m["route"])
		require.Equal(t, float64(i+1), m["attempt"])
		require.Equal(t, 0.0, m["status"])
		require.Contains(t, m["error"], "request failed")
	}
	require.NotContains(t, buf.String(), srv.Token())
	require.NotContains(t, buf.String(), "the-rest-of-the-body")
}
