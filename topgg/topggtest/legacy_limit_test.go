package topggtest

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLegacyRateLimit(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now), WithLegacyLimit(3, time.Minute))
	own := DiscordBot().PlatformID
	get := func() response { return v0(t, s, http.MethodGet, "/bots/"+own, nil) }

	requireStatus(t, get(), http.StatusOK)
	clock.Advance(20 * time.Second)
	requireStatus(t, get(), http.StatusOK)
	requireStatus(t, v0(t, s, http.MethodGet, "/bots/"+own+"/stats", nil), http.StatusOK)

	r := get()
	requireStatus(t, r, http.StatusTooManyRequests)
	require.Equal(t, "40", r.Header.Get("Retry-After"))
	require.JSONEq(t, `{"retry-after":40}`, string(r.Body))

	// v1 is not limited by the v0 window, and bad tokens are not counted.
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusOK)
	requireLegacyError(t, send(t, s, http.MethodGet, "/bots/"+own, "Bearer "+s.Token()+"x", nil), http.StatusUnauthorized)

	clock.Advance(40 * time.Second) // the first request leaves the window
	requireStatus(t, get(), http.StatusOK)
	r = get()
	requireStatus(t, r, http.StatusTooManyRequests)
	require.Equal(t, "20", r.Header.Get("Retry-After"))
}

func TestLegacyRateLimitDefaultAndDisabled(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	for range 60 {
		requireStatus(t, v0(t, s, http.MethodGet, "/bots?limit=1", nil), http.StatusOK)
	}
	requireStatus(t, v0(t, s, http.MethodGet, "/bots?limit=1", nil), http.StatusTooManyRequests)

	off := newTestServer(t, WithNow(clock.Now), WithLegacyLimit(0, time.Minute))
	for range 100 {
		requireStatus(t, v0(t, off, http.MethodGet, "/bots?limit=1", nil), http.StatusOK)
	}
}
