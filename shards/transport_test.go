package shards

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
)

// TestSeconds: Discord's seconds, with fractions, and nonsense, within bounds.
func TestSeconds(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"2": 2 * time.Second, "0.5": 500 * time.Millisecond, " 1.25 ": 1250 * time.Millisecond, "0": 0, "-3": 0,
		"1e9": maxRateLimitWait, "+Inf": maxRateLimitWait, "1e400": maxRateLimitWait, "-1e400": 0,
	} {
		got, ok := seconds(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "soon", "NaN", "1s"} {
		_, ok := seconds(in)
		assert.False(t, ok, in)
	}
}

// TestRetryAfter: Retry-After first, then X-RateLimit-Reset-After, then a
// second; never less than the floor.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	assert.Equal(t, time.Second, retryAfter(h))
	h.Set("X-RateLimit-Reset-After", "3.5")
	assert.Equal(t, 3500*time.Millisecond, retryAfter(h))
	h.Set("Retry-After", "7")
	assert.Equal(t, 7*time.Second, retryAfter(h))
	h.Set("Retry-After", "0")
	assert.Equal(t, minRateLimitWait, retryAfter(h))
}

// TestRouteKey: the major parameter stays, other IDs and tokens go.
func TestRouteKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/api/v9/guilds/1/members/2/roles/3":               "/api/v9/guilds/1/members/:id/roles/:id",
		"/api/v9/channels/5/messages/6":                    "/api/v9/channels/5/messages/:id",
		"/api/v9/interactions/7/aW50ZXJhY3Rpb24/callback":  "/api/v9/interactions/:id/:token/callback",
		"/api/v9/webhooks/8/d2ViaG9vaw/messages/@original": "/api/v9/webhooks/8/:token/messages/@original",
		"/api/v9/applications/9/commands":                  "/api/v9/applications/:id/commands",
		"/api/v9/gateway":                                  "/api/v9/gateway",
		"/api/v9/users/@me":                                "/api/v9/users/@me",
	} {
		assert.Equal(t, want, routeKey(in), in)
	}
}

// body is a response body of n bytes.
type body struct{ n, read int }

func (b *body) Read(p []byte) (int, error) {
	if b.read >= b.n {
		return 0, io.EOF
	}
	k := min(len(p), b.n-b.read)
	b.read += k
	return k, nil
}

func (b *body) Close() error { return nil }

// answer is a RoundTripper answering with a body of n bytes, declared or not.
type answer struct {
	n        int
	declared bool
}

func (a answer) RoundTrip(r *http.Request) (*http.Response, error) {
	cl := int64(-1)
	if a.declared {
		cl = int64(a.n)
	}
	return &http.Response{StatusCode: http.StatusOK, Body: &body{n: a.n}, ContentLength: cl, Request: r}, nil
}

// TestBodyLimit: a body of the bound is read whole; one byte more fails with
// ErrBodyTooLarge, after reading no more than the bound and a byte, or
// before reading when the length is declared.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	const limit = 1000
	req, err := http.NewRequest(http.MethodGet, "https://discord.com/api/v9/users/@me", http.NoBody)
	require.NoError(t, err)
	for _, declared := range []bool{false, true} {
		resp, err := testTransport("", limit, answer{limit, declared}).RoundTrip(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Len(t, b, limit)

		resp, err = testTransport("", limit, answer{math.MaxInt32, declared}).RoundTrip(req)
		if err == nil {
			b, err = io.ReadAll(resp.Body)
			assert.LessOrEqual(t, len(b), limit)
			assert.LessOrEqual(t, resp.Body.(*limitedBody).rc.(*body).read, limit+1)
		}
		require.ErrorIs(t, err, ErrBodyTooLarge, "declared=%t", declared)
		assert.Contains(t, err.Error(), "GET /api/v9/users/@me: response body too large (over 1000 bytes)")
	}
}

// TestBodyLimitErrorHoldsNoToken: the route in an ErrBodyTooLarge error, which is
// logged, shows an interaction or webhook token as ":token".
func TestBodyLimitErrorHoldsNoToken(t *testing.T) {
	t.Parallel()
	const token = "aW50ZXJhY3Rpb246c2VjcmV0LXRva2Vu"
	req, err := http.NewRequest(http.MethodPatch, "https://discord.com/api/v9/webhooks/123456789012345678/"+token+"/messages/@original", http.NoBody)
	require.NoError(t, err)
	_, err = testTransport("", 10, answer{100, true}).RoundTrip(req)
	require.ErrorIs(t, err, ErrBodyTooLarge)
	assert.Contains(t, err.Error(), "/api/v9/webhooks/123456789012345678/:token/messages/@original")
	assert.NotContains(t, err.Error(), token)
}

// TestRateLimitWaitOfAnEndedTermIsNotSent: the rate limiter waits out
// a 429 (or a route's limit before the first send) and then sends, with no
// term check: a fleet leader's Discord write (a voter role, a DM) checked
// before the call goes out after the wait although the term ended during
// it. RoundTrip should call clock.CheckTerm(req.Context()) right before each
// send.
func TestRateLimitWaitOfAnEndedTermIsNotSent(t *testing.T) {
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
	cfg := defaultConfig()
	cfg.clock = clk
	hc := &http.Client{Transport: newTransport(&cfg, context.Background(), http.DefaultTransport)}
	ctx := clock.WithTerm(context.Background(), clock.NewTerm(clk, start.Add(500*time.Millisecond), nil))
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, ts.URL+"/api/v10/guilds/1/members/2/roles/3", nil)
	require.NoError(t, err)
	require.NoError(t, clock.CheckTerm(ctx), "the caller checks its term before the call")
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
		assert.ErrorIs(t, err, clock.ErrTermOver)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the request did not return")
	}
	assert.Equal(t, int32(1), hits.Load(), "the request was sent again after the term's deadline")
}
