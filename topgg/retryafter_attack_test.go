package topgg_test

import (
	"context"
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
