package topgg

import (
	"net/http"
	"testing"
	"time"
)

// BenchmarkObserveHook measures what an observer adds to one attempt, without
// the HTTP round trip that hides it in the client benchmarks: the two clock
// readings, the Request and the call of a no-op observer. It must not allocate.
//
//	go test -run '^$' -bench ObserveHook -benchmem ./topgg/
func BenchmarkObserveHook(b *testing.B) {
	c, err := New("token", WithObserver(func(Request) {}))
	if err != nil {
		b.Fatal(err)
	}
	r := &call{route: "PATCH /v1/projects/@me/metrics"}
	apiErr := &APIError{StatusCode: http.StatusTooManyRequests}
	rl := &RateLimitError{API: apiErr}
	b.Run("ok", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			c.observe(r, 1, http.StatusNoContent, time.Since(start), nil)
		}
	})
	b.Run("rate_limited", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			c.observe(r, 1, http.StatusTooManyRequests, time.Since(start), rl)
		}
	})
}
