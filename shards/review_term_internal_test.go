package shards

// Findings of the hostile review (review-attack): each test failed on the
// code it names before its fix.

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/term"
)

// TestReviewRateLimitWaitOfAnEndedTermIsNotSent: the rate limiter waits out
// a 429 (or a route's limit before the first send) and then sends, with no
// term check: a fleet leader's Discord write (a voter role, a DM) checked
// before the call goes out after the wait although the term ended during
// it. RoundTrip should call term.Check(req.Context()) right before each
// send.
func TestReviewRateLimitWaitOfAnEndedTermIsNotSent(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("X-RateLimit-Reset-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"message":"You are being rate limited.","retry_after":1,"global":false}`))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ts.Close)
	start := time.Unix(1_700_000_000, 0)
	clk := clock.NewFake(start)
	hc := &http.Client{Transport: newRateLimiter(http.DefaultTransport, clk, slog.New(slog.DiscardHandler))}
	ctx := term.With(context.Background(), term.New(clk, start.Add(500*time.Millisecond), nil))
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, ts.URL+"/api/v10/guilds/1/members/2/roles/3", nil)
	require.NoError(t, err)
	require.NoError(t, term.Check(ctx), "the caller checks its term before the call")
	done := make(chan error, 1)
	go func() {
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return hits.Load() == 1 && clk.Timers() > 0 }, 10*time.Second, time.Millisecond, "the 429 was not waited out")
	clk.Advance(2 * time.Second) // past the wait, and past the term
	select {
	case err := <-done:
		assert.ErrorIs(t, err, term.ErrOver)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the request did not return")
	}
	assert.Equal(t, int32(1), hits.Load(), "the request was sent again after the term's deadline")
}
