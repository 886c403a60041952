package topgg_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

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
				require.WithinDuration(t, time.Now().Add(time.Hour), rl.Until, 30*time.Second)
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
