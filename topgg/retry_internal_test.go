package topgg

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetryAfterParsing(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header string
		body   string
		want   time.Duration
		ok     bool
	}{
		{"1", "", time.Second, true},
		{" 120 ", "", 2 * time.Minute, true},
		{"0", "", 0, true},
		{"1.5", "", 1500 * time.Millisecond, true},
		{"-3", "", 0, true},
		{"1e2", "", 100 * time.Second, true},
		{"99999999999", "", maxRetryAfter, true},
		{"1e400", "", 0, false}, // out of float range: not a usable value
		{"Inf", "", 0, false},
		{"NaN", "", 0, false},
		{"0x10", "", 0, false},
		{"1_0", "", 0, false},
		{"soon", "", 0, false},
		{"", "", 0, false},
		{now.Add(30 * time.Second).Format(http.TimeFormat), "", 30 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), "", 0, true},
		// A date further ahead than the longest block is not trusted: missing.
		{now.AddDate(1, 0, 0).Format(http.TimeFormat), "", 0, false},
		{now.AddDate(1, 0, 0).Format(http.TimeFormat), `{"retry-after": 7}`, 7 * time.Second, true},
		{now.Add(maxRetryAfter).Format(http.TimeFormat), "", maxRetryAfter, true},
		// The body is the fallback, the header wins.
		{"", `{"retry-after": 7}`, 7 * time.Second, true},
		{"", `{"retry-after": 0.25}`, 250 * time.Millisecond, true},
		{"", `{"retry-after": "8"}`, 8 * time.Second, true},
		{"", `{"type":"about:blank","status":429,"retry-after":3600}`, time.Hour, true},
		{"2", `{"retry-after": 7}`, 2 * time.Second, true},
		{"garbage", `{"retry-after": 7}`, 7 * time.Second, true},
		{"", `{"retry-after": null}`, 0, false},
		{"", `{"retry-after": "soon"}`, 0, false},
		{"", `{"retry-after": true}`, 0, false},
		{"", `{"retry-after": -5}`, 0, true},
		{"", `{"retryAfter": 5}`, 0, false},
		{"", `[1]`, 0, false},
		{"", `not json`, 0, false},
	} {
		got, ok := retryAfter(tc.header, []byte(tc.body), now)
		require.Equal(t, tc.ok, ok, "%q %q", tc.header, tc.body)
		require.Equal(t, tc.want, got, "%q %q", tc.header, tc.body)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{MaxAttempts: 10, MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	for range 200 {
		for n, full := range map[int]time.Duration{
			1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond,
			4: 800 * time.Millisecond, 5: time.Second, 9: time.Second, 1000: time.Second,
		} {
			d := p.backoff(n)
			// Jitter takes up to half off, never adds.
			require.GreaterOrEqual(t, d, full/2, "retry %d", n)
			require.LessOrEqual(t, d, full, "retry %d", n)
		}
	}
	// Jitter spreads the waits.
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[p.backoff(3)] = true
	}
	require.Greater(t, len(seen), 10)

	require.Zero(t, RetryPolicy{MaxAttempts: 2}.backoff(5), "no backoff configured")
	huge := RetryPolicy{MaxAttempts: 100, MinBackoff: time.Hour, MaxBackoff: 1<<63 - 1}
	require.Positive(t, huge.backoff(100), "doubling must not overflow")
}

func TestDefaultRetryPolicy(t *testing.T) {
	t.Parallel()
	p := defaultRetryPolicy()
	require.NoError(t, p.validate())
	require.Greater(t, p.MaxAttempts, 1)
	require.Equal(t, 1, NoRetries().MaxAttempts)
	require.NoError(t, NoRetries().validate())
}
