package topgg_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
		return l.PostStats(ctx, "264811613708746752", topgg.BotStats{ServerCount: 5})
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

// Every 429 shape of the service gives the wait it says: the Retry-After
// header in seconds, else the body's "retry-after", a number or one quoted.
func Test429RetryAfterShapes(t *testing.T) {
	t.Parallel()
	date := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name, header, body string
		want               time.Duration // 0: none given
	}{
		{"header", "2", "", 2 * time.Second},
		{"header with spaces", " 2 ", "", 2 * time.Second},
		{"header, a date", date, "", time.Hour},
		{"header over body", "3", `{"retry-after": 7}`, 3 * time.Second},
		{"unusable header, body", "soon", `{"retry-after": 7}`, 7 * time.Second},
		{"body", "", `{"retry-after": 2}`, 2 * time.Second},
		{"body, fraction", "", `{"retry-after": 2.5}`, 2500 * time.Millisecond},
		{"body, quoted", "", `{"retry-after": "2"}`, 2 * time.Second},
		{"body, quoted with spaces", "", `{"retry-after": " 2 "}`, 2 * time.Second},
		{"body, quoted fraction with spaces", "", `{"retry-after": "\t2.5 "}`, 2500 * time.Millisecond},
		{"body, problem+json", "", `{"type":"about:blank","title":"Too Many Requests","status":429,"retry-after":4}`, 4 * time.Second},
		{"body, v0 error", "", `{"error":"Slow down","retry-after":"3600"}`, time.Hour},
		{"neither", "", `{"title":"Too Many Requests"}`, 0},
		{"body, not a number", "", `{"retry-after": "soon"}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := newClient(t, srv, topgg.WithRetryPolicy(topgg.NoRetries()))
			f := topggtest.Fault{Path: "/v1/projects/@me", Status: http.StatusTooManyRequests, Body: tc.body}
			if tc.header != "" {
				f.Header = map[string]string{"Retry-After": tc.header}
			}
			require.NoError(t, srv.Inject(f))
			_, err := c.Project(t.Context())
			var rl *topgg.RateLimitError
			require.ErrorAs(t, err, &rl)
			if tc.header == date { // a little less than an hour, by now
				require.InDelta(t, tc.want, rl.RetryAfter, float64(time.Minute))
				return
			}
			require.Equal(t, tc.want, rl.RetryAfter)
			require.Equal(t, tc.want, rl.API.RetryAfter)
		})
	}
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
	require.InDelta(t, time.Minute, rl.RetryAfter, float64(5*time.Second))
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

// TestCancelDuringAWait: a call cancelled while it waits out a Retry-After,
// a backoff or the answer returns at once, after its one request (the
// request itself cut, not repeated).
func TestCancelDuringAWait(t *testing.T) {
	t.Parallel()
	retryAfter := fastRetries()
	retryAfter.MaxRetryAfter = time.Minute
	project := func(ctx context.Context, c *topgg.Client) error {
		_, err := c.Project(ctx)
		return err
	}
	cases := []struct {
		name   string
		policy *topgg.RetryPolicy // nil: the client's default
		fault  topggtest.Fault
		call   func(context.Context, *topgg.Client) error
	}{
		{"RetryAfter", &retryAfter, topggtest.Fault{Path: "/v1/projects/@me/metrics", RetryAfter: 30 * time.Second},
			metrics(topgg.BotMetrics{ServerCount: new(1)})},
		{"Backoff", &topgg.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Minute, MaxBackoff: time.Minute},
			topggtest.Fault{Status: 500}, project},
		{"Request", nil, topggtest.Fault{Delay: time.Minute}, voteStatus("1", "")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			var opts []topgg.Option
			if tc.policy != nil {
				opts = append(opts, topgg.WithRetryPolicy(*tc.policy))
			}
			c := newClient(t, srv, opts...)
			require.NoError(t, srv.Inject(tc.fault))
			ctx, cancel := context.WithCancel(t.Context())

			done := waitCall(ctx, c, tc.call)
			require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, time.Millisecond)
			requireCanceledSoon(t, cancel, done)
			require.Len(t, srv.Requests(), 1)
		})
	}
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
}

func TestRetryableTable(t *testing.T) {
	t.Parallel()
	api := func(status int) *topgg.APIError {
		return &topgg.APIError{Op: "GET /v1/projects/@me", StatusCode: status}
	}
	req := func(err error) *topgg.RequestError {
		return &topgg.RequestError{Op: "GET /v1/projects/@me", Attempts: 4, Err: err}
	}
	wrap := func(err error) error { return fmt.Errorf("poll: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"foreign error", errors.New("disk full"), false},
		{"io.EOF alone", io.EOF, false},
		{"validation", &topgg.ValidationError{Field: "title", Problem: "empty", Rule: "3-100"}, false},
		{"decode of a 2xx", &topgg.DecodeError{Op: "GET /v1/projects/@me", Status: 200, Err: errors.New("bad json")}, false},
		{"pagination", fmt.Errorf("%w: GET /v1/projects/@me/votes: page 3: cycle", topgg.ErrPagination), false},

		{"connection refused", req(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), true},
		{"connection reset mid-body", req(io.ErrUnexpectedEOF), true},
		{"http.Client timeout", req(fmt.Errorf("awaiting headers: %w", context.DeadlineExceeded)), true},
		{"refused redirect", req(fmt.Errorf("%w: https://a to http://a", topgg.ErrUnsafeRedirect)), false},
		{"untrusted certificate", req(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), false},
		{"certificate for another host", req(x509.HostnameError{Host: "top.gg"}), false},
		{"request cancelled", req(context.Canceled), false},

		{"400", api(400), false},
		{"401", api(401), false},
		{"403", api(403), false},
		{"404", api(404), false},
		{"408", api(408), true},
		{"409", api(409), false},
		{"413", api(413), false},
		{"422", api(422), false},
		{"425", api(425), true},
		{"429 without a wait", api(429), true},
		{"500", api(500), true},
		{"501", api(501), false},
		{"502", api(502), true},
		{"503", api(503), true},
		{"504", api(504), true},
		{"505", api(505), false},
		{"599", api(599), true},
		{"418", api(418), false},

		{"429 block", &topgg.RateLimitError{Op: "x", RetryAfter: time.Hour, API: api(429)}, true},
		{"503 block", &topgg.RateLimitError{Op: "x", RetryAfter: time.Hour, API: api(503)}, true},
		{"local block", &topgg.RateLimitError{Op: "x", RetryAfter: time.Hour, Local: true}, true},

		{"ErrRateLimited itself", topgg.ErrRateLimited, true},
		{"ErrNotFound itself", topgg.ErrNotFound, false},
		{"ErrUnauthorized itself", topgg.ErrUnauthorized, false},
		{"ErrPagination itself", topgg.ErrPagination, false},
		{"ErrUnsafeRedirect itself", topgg.ErrUnsafeRedirect, false},
		{"context.Canceled", context.Canceled, false},
		{"context.DeadlineExceeded", context.DeadlineExceeded, false},

		{"wrapped 503", wrap(api(503)), true},
		{"wrapped 422", wrap(api(422)), false},
		{"wrapped block", wrap(&topgg.RateLimitError{Local: true}), true},
		{"wrapped request", wrap(req(io.ErrUnexpectedEOF)), true},
		{"cancelled around a 503", fmt.Errorf("%w after %w", context.Canceled, api(503)), false},
		{"joined 503 and validation: the first decides", errors.Join(api(503), &topgg.ValidationError{}), true},
	} {
		require.Equal(t, tc.want, topgg.Retryable(tc.err), tc.name)
	}
}

const metricsPath = "/v1/projects/@me/metrics"

// warnLogs returns a logger and what it wrote: the client warns the moment it
// records a block, which lets a test act right after it, not after a sleep.
func warnLogs() (*slog.Logger, *logBuffer) {
	var buf logBuffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})), &buf
}

// requireQuietUntil checks that the server got no request of family (paths with
// the prefix, batch included) between the blocking answer's request and its end.
func requireQuietUntil(t *testing.T, srv *topggtest.Server, family string, wait time.Duration) {
	t.Helper()
	reqs := srv.Requests()
	var first time.Time
	for _, r := range reqs {
		if !strings.HasPrefix(r.Path, family) {
			continue
		}
		if first.IsZero() {
			first = r.At
			continue
		}
		require.GreaterOrEqual(t, r.At.Sub(first), wait, "%s %s was sent %s after the blocking answer", r.Method, r.Path, r.At.Sub(first))
	}
}

// TestRetryAfterBlocksTheFamilyWhileOneCallWaits: while one call waits out a short
// Retry-After (of a 429 or a 503) before its retry, other calls of the same route
// family are not sent; other families are.
func TestRetryAfterBlocksTheFamilyWhileOneCallWaits(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			logger, logs := warnLogs()
			c := newClient(t, srv, topgg.WithLogger(logger))
			const wait = time.Second
			require.NoError(t, srv.Inject(topggtest.Fault{Method: http.MethodPatch, Path: metricsPath, Status: status, RetryAfter: wait}))

			first := waitCall(t.Context(), c, metrics(topgg.BotMetrics{ServerCount: new(1)}))
			require.Eventually(t, func() bool { return strings.Contains(logs.String(), "rate limited") }, 5*time.Second, time.Millisecond)

			// The block is known: a call of the family waits for its end...
			second := waitCall(t.Context(), c, batch(1, nil))
			// ...while another family goes out at once.
			_, err := c.Project(t.Context())
			require.NoError(t, err)

			for _, done := range []<-chan error{first, second} {
				select {
				case err := <-done:
					require.NoError(t, err)
				case <-time.After(10 * time.Second):
					t.Fatal("a call did not finish")
				}
			}
			require.Len(t, srv.Requests(), 4)
			requireQuietUntil(t, srv, metricsPath, wait)
		})
	}
}

// TestRetryAfterOutlivesAShortDeadline: a caller whose deadline ends before the
// wait does not make the client forget the block.
func TestRetryAfterOutlivesAShortDeadline(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	logger, logs := warnLogs()
	c := newClient(t, srv, topgg.WithLogger(logger))
	const wait = 3 * time.Second
	require.NoError(t, srv.Inject(topggtest.Fault{Path: metricsPath, RetryAfter: wait}))

	short, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	err := c.UpdateMetrics(short, topgg.BotMetrics{ServerCount: new(1)})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, srv.Requests(), 1)
	require.Contains(t, logs.String(), "rate limited", "the 429 came before the deadline")

	// Another short caller of the family sends nothing either...
	short2, cancel2 := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel2()
	require.ErrorIs(t, c.PostMetricsBatch(short2, []topgg.MetricsSample{{Metrics: topgg.BotMetrics{ServerCount: new(2)}}}), context.DeadlineExceeded)
	require.Len(t, srv.Requests(), 1)
	// ...and one that can wait goes out once the block ends.
	require.NoError(t, c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(2)}))
	require.Len(t, srv.Requests(), 2)
	requireQuietUntil(t, srv, metricsPath, wait)
}

// TestRetryAfterOnAnyStatusBlocks: a Retry-After beyond what a call waits out, on
// any status, blocks the route family for that long: the answer says how long,
// and the next call of the family is refused locally, without a request.
func TestRetryAfterOnAnyStatusBlocks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status   int
		httpDate bool // Retry-After as an HTTP date an hour ahead
	}{
		{status: 503}, {status: 500}, {status: 502}, {status: 504}, {status: 408},
		{status: 503, httpDate: true},
		{status: 400}, {status: 403}, {status: 422}, {status: 501},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := newClient(t, srv)
			f := topggtest.Fault{Path: metricsPath, Status: tc.status, RetryAfter: time.Hour}
			if tc.httpDate {
				f.Header = map[string]string{"Retry-After": time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}
			}
			require.NoError(t, srv.Inject(f))

			err := c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(1)})
			require.Len(t, srv.Requests(), 1, "an hour is not waited out, nor retried")
			var apiErr *topgg.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, tc.status, apiErr.StatusCode)
			require.InDelta(t, time.Hour.Seconds(), apiErr.RetryAfter.Seconds(), 30, "the wait is readable on the answer")
			var rl *topgg.RateLimitError
			if topgg.Retryable(apiErr) {
				require.ErrorAs(t, err, &rl, "a retryable status with a wait comes as a *RateLimitError")
				require.False(t, rl.Local)
				require.InDelta(t, time.Hour.Seconds(), rl.RetryAfter.Seconds(), 30)
				require.Contains(t, err.Error(), http.StatusText(tc.status))
				require.Contains(t, err.Error(), "retry after")
				require.True(t, topgg.Retryable(err))
			} else {
				require.NotErrorAs(t, err, &rl)
				require.False(t, topgg.Retryable(err))
			}

			for _, call := range []func(context.Context, *topgg.Client) error{metrics(topgg.BotMetrics{ServerCount: new(2)}), batch(1, nil)} {
				err = call(t.Context(), c)
				require.ErrorAs(t, err, &rl)
				require.True(t, rl.Local)
				require.Greater(t, rl.RetryAfter, 59*time.Minute)
				require.ErrorContains(t, err, "not sent")
			}
			require.Len(t, srv.Requests(), 1, "nothing is sent into the block")

			_, err = c.Project(t.Context())
			require.NoError(t, err, "other families are not blocked")
		})
	}
}

// TestRetryAfterZeroIsNoTightLoop: "Retry-After: 0" on every answer still spaces
// the retries by the backoff, and the call ends after MaxAttempts.
func TestRetryAfterZeroIsNoTightLoop(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	p := fastRetries()
	p.MinBackoff, p.MaxBackoff = 50*time.Millisecond, 50*time.Millisecond
	c := newClient(t, srv, topgg.WithRetryPolicy(p))
	require.NoError(t, srv.Inject(topggtest.Fault{Status: 429, Times: 10, Header: map[string]string{"Retry-After": "0"}}))

	_, err := c.Project(t.Context())
	require.ErrorIs(t, err, topgg.ErrRateLimited)
	reqs := srv.Requests()
	require.Len(t, reqs, 4)
	for i := 1; i < len(reqs); i++ {
		require.GreaterOrEqual(t, reqs[i].At.Sub(reqs[i-1].At), 25*time.Millisecond, "backoff (with jitter) between tries")
	}
}

// skewedPeer is a Top.gg whose clock is off by skew: it answers the first
// metrics PATCH with a 429 whose Retry-After is an HTTP date, retryAt after its
// own Date (skewed too), the first fails times, and proxies the rest to a topggtest server. It
// records when each metrics request arrived.
type skewedPeer struct {
	*httptest.Server
	fake *topggtest.Server

	mu    sync.Mutex
	at    []time.Time
	fails int // 429s left to answer
}

func newSkewedPeer(t *testing.T, skew, retryAt time.Duration, fails int) *skewedPeer {
	t.Helper()
	p := &skewedPeer{fake: newServer(t), fails: fails}
	target, err := url.Parse(p.fake.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == metricsPath {
			p.mu.Lock()
			p.at = append(p.at, time.Now())
			first := p.fails > 0
			p.fails--
			p.mu.Unlock()
			if first {
				now := time.Now().Add(skew)
				w.Header().Set("Date", now.UTC().Format(http.TimeFormat))
				w.Header().Set("Retry-After", now.Add(retryAt).UTC().Format(http.TimeFormat))
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *skewedPeer) arrivals() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.at...)
}

// TestRetryAfterDateFromASkewedPeer: an HTTP-date Retry-After is measured
// against the answer's own Date, so a peer whose clock is an hour ahead or
// behind ours gets the wait it asked for (2 s), not an hour-long block nor
// none; a date further ahead than any block (a year) is ignored, logged
// once, and the call retries with backoff instead of blocking its family
// for a day.
func TestRetryAfterDateFromASkewedPeer(t *testing.T) {
	t.Parallel()
	const asked = 2 * time.Second
	for name, skew := range map[string]time.Duration{"ahead": time.Hour, "behind": -time.Hour} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newSkewedPeer(t, skew, asked, 1)
			c, err := topgg.New(p.fake.Token(), topgg.WithBaseURL(p.URL), topgg.WithRetryPolicy(fastRetries()))
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1)}))
			at := p.arrivals()
			require.Len(t, at, 2)
			// HTTP dates have whole seconds: the wait is asked-1s at least.
			assert.GreaterOrEqual(t, at[1].Sub(at[0]), asked-time.Second, "the retry did not wait the peer's Retry-After")
			assert.Less(t, at[1].Sub(at[0]), asked+2*time.Second)
		})
	}
	t.Run("a year ahead", func(t *testing.T) {
		t.Parallel()
		p := newSkewedPeer(t, 0, 365*24*time.Hour, 2)
		logger, logs := warnLogs()
		c, err := topgg.New(p.fake.Token(), topgg.WithBaseURL(p.URL), topgg.WithRetryPolicy(fastRetries()), topgg.WithLogger(logger))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(1)}), "retried with backoff, not refused")
		require.NoError(t, c.UpdateMetrics(ctx, topgg.BotMetrics{ServerCount: new(2)}), "no day-long block of the family")
		assert.Len(t, p.arrivals(), 4)
		assert.Equal(t, 1, strings.Count(logs.String(), "ignoring a Retry-After"), logs.String())
	})
}

// TestBlockSeenAfterLegacyWait: a v0 call that waits for a limiter slot while
// another call learns of a one-hour block is refused locally when its slot
// comes, not sent into the block.
func TestBlockSeenAfterLegacyWait(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	// The window is long enough that the blocker's late 429 (200 ms) always
	// arrives before the waiter's slot frees.
	const window = time.Second
	c := newClient(t, srv, topgg.WithLegacyLimit(2, window))
	l := c.Legacy()
	bot := srv.Project().PlatformID

	_, err := l.HasVoted(t.Context(), bot, "1") // first slot
	require.NoError(t, err)

	// The blocker takes the second slot; its answer, late, is a one-hour 429.
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/bots*", RetryAfter: time.Hour, Delay: 200 * time.Millisecond}))
	blocker := make(chan error, 1)
	go func() {
		_, err := l.Stats(t.Context(), bot)
		blocker <- err
	}()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 2 }, 5*time.Second, time.Millisecond)

	// The waiter finds the window full and waits for the first slot.
	start := time.Now()
	_, err = l.HasVoted(t.Context(), bot, "1")
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local, "the block must refuse the call locally: %v", err)
	require.Nil(t, rl.API)
	require.Greater(t, rl.RetryAfter, 59*time.Minute)
	require.GreaterOrEqual(t, time.Since(start), window/2, "the waiter must have waited for its slot first")

	err = <-blocker
	require.ErrorAs(t, err, &rl)
	require.False(t, rl.Local)
	require.Len(t, srv.Requests(), 2, "no request may go out after the block was recorded")
}

// TestBlockSeenBeforeRetry: a retry after backoff is not sent when another call
// has recorded a block of the same family in the meantime.
func TestBlockSeenBeforeRetry(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv, topgg.WithRetryPolicy(topgg.RetryPolicy{
		MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: time.Second, MaxRetryAfter: 5 * time.Second,
	}))
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes/*", Status: 500}))
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", RetryAfter: time.Hour}))

	retrier := waitCall(t.Context(), c, voteStatus("1", ""))
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, time.Millisecond)

	// While the retrier backs off, a call of the same family learns of a block
	// (its Retry-After is over MaxRetryAfter, so it is not waited out).
	_, err := c.Votes(t.Context(), topgg.VotesQuery{StartDate: time.Now().Add(-time.Hour)})
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.False(t, rl.Local)
	require.Len(t, srv.Requests(), 2)

	select {
	case err = <-retrier:
	case <-time.After(10 * time.Second):
		t.Fatal("the retrier did not finish")
	}
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local, "the retry must be refused locally: %v", err)
	require.Len(t, srv.Requests(), 2, "the retry must not be sent into the block")
}
