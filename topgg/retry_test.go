package topgg_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// idempotentCalls are the calls the client may send twice, each with the path a
// fault must match.
var idempotentCalls = []struct {
	name, method, path string
	call               func(context.Context, *topgg.Client) error
}{
	{"project", "GET", "/v1/projects/@me", func(ctx context.Context, c *topgg.Client) error {
		_, err := c.Project(ctx)
		return err
	}},
	{"update project", "PATCH", "/v1/projects/@me", headline("A new headline")},
	{"metrics", "PATCH", "/v1/projects/@me/metrics", metrics(topgg.BotMetrics{ServerCount: new(3)})},
	{"batch", "POST", "/v1/projects/@me/metrics/batch", batch(2, nil)},
	{"commands", "PUT", "/v1/projects/@me/commands", commands(`{"name":"vote","description":"Vote"}`)},
	{"votes", "GET", "/v1/projects/@me/votes", votesFrom(time.Now().Add(-time.Hour))},
	{"vote status", "GET", "/v1/projects/@me/votes/123", voteStatus("123", "")},
	{"v0 post stats", "POST", "/bots/264811613708746752/stats", legacy(func(ctx context.Context, l *topgg.Legacy) error {
		return l.PostStats(ctx, "264811613708746752", topgg.StatsUpdate{ServerCount: 5})
	})},
	{"v0 bot", "GET", "/bots/264811613708746752", legacy(func(ctx context.Context, l *topgg.Legacy) error {
		_, err := l.Bot(ctx, "264811613708746752")
		return err
	})},
	{"v0 check", "GET", "/bots/264811613708746752/check", legacy(func(ctx context.Context, l *topgg.Legacy) error {
		_, err := l.HasVoted(ctx, "264811613708746752", "1")
		return err
	})},
}

func TestRetry5xxThenSuccess(t *testing.T) {
	t.Parallel()
	for _, tc := range idempotentCalls {
		for _, status := range []int{500, 502, 503} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				srv := newServer(t)
				c := newClient(t, srv)
				require.NoError(t, srv.Inject(topggtest.Fault{Method: tc.method, Path: tc.path, Status: status}))

				require.NoError(t, tc.call(t.Context(), c))
				reqs := srv.Requests()
				require.Len(t, reqs, 2, "one call, two requests")
				require.Equal(t, reqs[0].Method, reqs[1].Method)
				require.Equal(t, reqs[0].Path, reqs[1].Path)
				require.Equal(t, reqs[0].Query, reqs[1].Query)
				require.Equal(t, string(reqs[0].Body), string(reqs[1].Body), "the same body again")
				require.Equal(t, reqs[0].Header.Get("Authorization"), reqs[1].Header.Get("Authorization"))
			})
		}
	}
}

func TestRetryGivesUp(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	require.NoError(t, srv.Inject(topggtest.Fault{Status: 503, Times: 10}))

	err := c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(1)})
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 503, apiErr.StatusCode)
	require.Equal(t, 4, apiErr.Attempts)
	require.Contains(t, err.Error(), "after 4 attempts")
	require.Len(t, srv.Requests(), 4)
}

func TestNoRetryOn4xx(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 401, 403, 404, 409, 422} {
		srv := newServer(t)
		c := newClient(t, srv)
		require.NoError(t, srv.Inject(topggtest.Fault{Status: status}))
		err := c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(1)})
		var apiErr *topgg.APIError
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, status, apiErr.StatusCode)
		require.Len(t, srv.Requests(), 1, "status %d", status)
	}
}

func TestRetryAfterIsWaitedOut(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/metrics", RetryAfter: time.Second}))

	require.NoError(t, c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(1)}))
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	require.GreaterOrEqual(t, reqs[1].At.Sub(reqs[0].At), time.Second, "no request may go out before Retry-After ends")
	// A short 429 that was waited out leaves no block behind.
	require.NoError(t, c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(2)}))
	require.Len(t, srv.Requests(), 3)
}

func TestRetryAfterFromBody(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	// No header: the body's kebab-case key says how long.
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Status: 429, Body: `{"retry-after": 1}`}))

	_, err := c.Project(t.Context())
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	require.GreaterOrEqual(t, reqs[1].At.Sub(reqs[0].At), time.Second)
}

func TestLongRetryAfterFailsFastThereafter(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/metrics", RetryAfter: time.Minute}))

	err := c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(1)})
	require.ErrorIs(t, err, topgg.ErrRateLimited)
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.False(t, rl.Local)
	require.Equal(t, time.Minute, rl.RetryAfter)
	require.WithinDuration(t, time.Now().Add(time.Minute), rl.Until, 5*time.Second)
	require.NotNil(t, rl.API)
	require.Equal(t, 429, rl.API.StatusCode)
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr, "the 429 answer is reachable too")
	require.Len(t, srv.Requests(), 1)

	// The whole metrics family is blocked, without a request...
	for _, call := range []func(context.Context, *topgg.Client) error{
		metrics(topgg.BotMetrics{ServerCount: new(2)}),
		batch(1, nil),
	} {
		err = call(t.Context(), c)
		require.ErrorIs(t, err, topgg.ErrRateLimited)
		require.ErrorAs(t, err, &rl)
		require.True(t, rl.Local)
		require.Nil(t, rl.API)
		require.Greater(t, rl.RetryAfter, 50*time.Second)
		require.LessOrEqual(t, rl.RetryAfter, time.Minute)
		require.Contains(t, err.Error(), "not sent")
	}
	require.Len(t, srv.Requests(), 1)

	// ...while other families are not.
	_, err = c.Project(t.Context())
	require.NoError(t, err)
	require.Len(t, srv.Requests(), 2)
}

func TestRetryAfterOverPolicyBound(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	p := fastRetries()
	p.MaxRetryAfter = 500 * time.Millisecond
	c := newClient(t, srv, topgg.WithRetryPolicy(p))
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", RetryAfter: time.Second}))

	_, err := c.Project(t.Context())
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.Equal(t, time.Second, rl.RetryAfter)
	require.Len(t, srv.Requests(), 1)
}

func Test429WithoutRetryAfterBacksOff(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Status: 429, Body: `{"title":"Too Many Requests"}`}))

	_, err := c.Project(t.Context())
	require.NoError(t, err)
	require.Len(t, srv.Requests(), 2)
}

func TestAnnouncementNeverRetried(t *testing.T) {
	t.Parallel()
	for _, f := range []topggtest.Fault{
		{Status: 500},
		{Status: 503},
		{RetryAfter: time.Second},
		{Drop: true},
	} {
		srv := newServer(t)
		c := newClient(t, srv)
		f.Path = "/v1/projects/@me/announcements"
		require.NoError(t, srv.Inject(f))

		_, err := c.PostAnnouncement(t.Context(), topgg.NewAnnouncement{Title: "Hello", Content: "An announcement."})
		require.Error(t, err)
		require.Len(t, srv.Requests(), 1, "fault %+v: an announcement is sent once", f)
		var reqErr *topgg.RequestError
		var apiErr *topgg.APIError
		switch {
		case f.Drop:
			require.ErrorAs(t, err, &reqErr)
			require.Equal(t, 1, reqErr.Attempts)
		default:
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, 1, apiErr.Attempts)
		}
		require.Empty(t, srv.Announcements())
	}
}

func TestDroppedConnection(t *testing.T) {
	t.Parallel()
	for _, tc := range idempotentCalls {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := newClient(t, srv)
			// Twice: net/http itself resends some requests once on a reused connection.
			require.NoError(t, srv.Inject(topggtest.Fault{Method: tc.method, Path: tc.path, Drop: true, Times: 2}))

			require.NoError(t, tc.call(t.Context(), c))
			require.Len(t, srv.Requests(), 3)
			require.Zero(t, srv.PendingFaults())
		})
	}
}

func TestDroppedConnectionGivesUp(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	require.NoError(t, srv.Inject(topggtest.Fault{Drop: true, Times: 100}))

	_, err := c.Project(t.Context())
	var reqErr *topgg.RequestError
	require.ErrorAs(t, err, &reqErr)
	require.Equal(t, 4, reqErr.Attempts)
	require.Equal(t, "GET /v1/projects/@me", reqErr.Op)
	require.NotErrorIs(t, err, topgg.ErrNotFound)
}

// waitCall starts call in a goroutine and returns its result channel.
func waitCall(ctx context.Context, c *topgg.Client, call func(context.Context, *topgg.Client) error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- call(ctx, c) }()
	return done
}

// requireCanceledSoon cancels and expects the call to end with context.Canceled
// well before its wait would have ended.
func requireCanceledSoon(t *testing.T, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not stop when its context was cancelled")
	}
}

func TestCancelDuringRetryAfter(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	p := fastRetries()
	p.MaxRetryAfter = time.Minute
	c := newClient(t, srv, topgg.WithRetryPolicy(p))
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/metrics", RetryAfter: 30 * time.Second}))
	ctx, cancel := context.WithCancel(t.Context())

	done := waitCall(ctx, c, metrics(topgg.BotMetrics{ServerCount: new(1)}))
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, time.Millisecond)
	requireCanceledSoon(t, cancel, done)
	require.Len(t, srv.Requests(), 1)
}

func TestCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv, topgg.WithRetryPolicy(topgg.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Minute, MaxBackoff: time.Minute}))
	require.NoError(t, srv.Inject(topggtest.Fault{Status: 500}))
	ctx, cancel := context.WithCancel(t.Context())

	done := waitCall(ctx, c, func(ctx context.Context, c *topgg.Client) error {
		_, err := c.Project(ctx)
		return err
	})
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, time.Millisecond)
	requireCanceledSoon(t, cancel, done)
	require.Len(t, srv.Requests(), 1)
}

func TestCancelDuringRequest(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	require.NoError(t, srv.Inject(topggtest.Fault{Delay: time.Minute}))
	ctx, cancel := context.WithCancel(t.Context())

	done := waitCall(ctx, c, voteStatus("1", ""))
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, time.Millisecond)
	requireCanceledSoon(t, cancel, done)
}

func TestCancelDuringLegacyLimit(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv, topgg.WithLegacyLimit(1, time.Hour))
	bot := srv.Project().PlatformID
	check := legacy(func(ctx context.Context, l *topgg.Legacy) error {
		_, err := l.HasVoted(ctx, bot, "1")
		return err
	})
	require.NoError(t, check(t.Context(), c))
	ctx, cancel := context.WithCancel(t.Context())

	done := waitCall(ctx, c, check)
	require.Never(t, func() bool { return len(done) > 0 }, 300*time.Millisecond, 5*time.Millisecond,
		"the second call should wait for a slot")
	requireCanceledSoon(t, cancel, done)
	require.Len(t, srv.Requests(), 1)
}

func TestDeadlineDuringRetryAfter(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", RetryAfter: 3 * time.Second}))
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()

	_, err := c.Project(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, srv.Requests(), 1)
}

func TestCancelledBeforeCall(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := c.Project(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, srv.Requests())
}

func TestLegacyLimiterWaits(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	const window = 300 * time.Millisecond
	c := newClient(t, srv, topgg.WithLegacyLimit(3, window))
	l := c.Legacy()
	bot := srv.Project().PlatformID

	for range 7 {
		_, err := l.HasVoted(t.Context(), bot, "1")
		require.NoError(t, err, "the limiter waits, it does not fail")
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 7)
	for i := 3; i < len(reqs); i++ {
		require.GreaterOrEqual(t, reqs[i].At.Sub(reqs[i-3].At), window, "request %d: at most 3 in any %s", i, window)
	}
}

// TestV1NotHeldByLegacyLimiter: with the v0 window full for an hour, v1 calls
// still go out at once.
func TestV1NotHeldByLegacyLimiter(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv, topgg.WithLegacyLimit(3, time.Hour))
	l := c.Legacy()
	bot := srv.Project().PlatformID
	for range 3 {
		_, err := l.HasVoted(t.Context(), bot, "1")
		require.NoError(t, err)
	}
	// The window is full: a fourth v0 call is held.
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := l.HasVoted(short, bot, "1")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// Held for an hour, a v1 call would miss any deadline a test can afford.
	ctx, cancel2 := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel2()
	for range 5 {
		_, err := c.VoteStatus(ctx, "1", "")
		require.NoError(t, err)
		_, err = c.Project(ctx)
		require.NoError(t, err)
	}
	require.Len(t, srv.Requests(), 3+10)
}

func TestLegacyServer429Blocks(t *testing.T) {
	t.Parallel()
	srv := newServer(t, topggtest.WithLegacyLimit(2, time.Hour))
	c := newClient(t, srv, topgg.WithLegacyLimit(0, 0))
	l := c.Legacy()
	bot := srv.Project().PlatformID

	for range 2 {
		_, err := l.Stats(t.Context(), bot)
		require.NoError(t, err)
	}
	_, err := l.Stats(t.Context(), bot)
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.False(t, rl.Local)
	require.Greater(t, rl.RetryAfter, 59*time.Minute)
	require.Len(t, srv.Requests(), 3)

	// Every v0 route shares the block; v1 does not.
	_, err = l.HasVoted(t.Context(), bot, "1")
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local)
	require.Len(t, srv.Requests(), 3)
	_, err = c.Project(t.Context())
	require.NoError(t, err)
}

func TestRetryPolicyValidation(t *testing.T) {
	t.Parallel()
	for _, p := range []topgg.RetryPolicy{
		{MaxAttempts: 0},
		{MaxAttempts: 1, MinBackoff: -1},
		{MaxAttempts: 1, MinBackoff: 2, MaxBackoff: 1},
		{MaxAttempts: 1, MaxRetryAfter: -1},
	} {
		_, err := topgg.New("token", topgg.WithRetryPolicy(p))
		require.Error(t, err, "%+v", p)
	}
	_, err := topgg.New("token", topgg.WithRetryPolicy(topgg.NoRetries()))
	require.NoError(t, err)
	_, err = topgg.New("token", topgg.WithLegacyLimit(-1, time.Second))
	require.Error(t, err)
}
