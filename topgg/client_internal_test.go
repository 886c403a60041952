package topgg

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A body whose length the server announced is read into one buffer of that
// size (what a careful hand-written client does), not grown as io.ReadAll grows.
func TestBodyReadIntoOneBufferOfItsContentLength(t *testing.T) {
	body := strings.Repeat(`{"voted":1}`, 1000)
	data, err := readAll(&http.Response{ContentLength: int64(len(body)), Body: io.NopCloser(strings.NewReader(body))})
	require.NoError(t, err)
	assert.Equal(t, body, string(data))
	assert.Equal(t, len(body), cap(data), "one buffer of the announced size")

	_, err = readAll(&http.Response{ContentLength: int64(len(body)) + 1, Body: io.NopCloser(strings.NewReader(body))})
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "a body shorter than announced")

	data, err = readAll(&http.Response{ContentLength: -1, Body: io.NopCloser(bytes.NewReader([]byte(body)))})
	require.NoError(t, err)
	assert.Equal(t, body, string(data), "a body of unknown length is read whole")
}

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
			d := p.backoff(n, true)
			// Jitter takes up to half off, never adds.
			require.GreaterOrEqual(t, d, full/2, "retry %d", n)
			require.LessOrEqual(t, d, full, "retry %d", n)
		}
	}
	// Jitter spreads the waits.
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[p.backoff(3, true)] = true
	}
	require.Greater(t, len(seen), 10)

	require.Zero(t, RetryPolicy{MaxAttempts: 2}.backoff(5, true), "no backoff configured")
	huge := RetryPolicy{MaxAttempts: 100, MinBackoff: time.Hour, MaxBackoff: 1<<63 - 1}
	require.Positive(t, huge.backoff(100, true), "doubling must not overflow")
}

func TestDefaultRetryPolicy(t *testing.T) {
	t.Parallel()
	p := defaultRetryPolicy()
	require.NoError(t, p.validate())
	require.Greater(t, p.MaxAttempts, 1)
	require.Equal(t, 1, NoRetries().MaxAttempts)
	require.NoError(t, NoRetries().validate())
}

func TestSameOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"https://top.gg/api", "https://top.gg/api/v1/x", true},
		{"https://top.gg/api", "https://TOP.GG:443/other", true},
		{"http://127.0.0.1:8080/api", "http://127.0.0.1:8080/x", true},
		{"http://top.gg/api", "https://top.gg/api", true}, // an upgrade keeps the host
		{"http://top.gg:80/api", "https://top.gg:443/api", true},
		{"https://top.gg/api", "http://top.gg/api", false}, // a downgrade
		{"https://top.gg/api", "http://top.gg:443/api", false},
		{"https://top.gg/api", "https://www.top.gg/api", false},
		{"https://top.gg/api", "https://top.gg:8443/api", false},
		{"http://127.0.0.1:8080/api", "http://127.0.0.1:8081/api", false},
		{"http://127.0.0.1:8080/api", "https://127.0.0.1:8443/api", false},
		{"https://top.gg/api", "ftp://top.gg/api", false},
	} {
		from, err := url.Parse(tc.from)
		require.NoError(t, err)
		to, err := url.Parse(tc.to)
		require.NoError(t, err)
		require.Equal(t, tc.want, sameOrigin(from, to), "%s -> %s", tc.from, tc.to)
	}
}

func TestTokenPayloadForms(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"bot":true,"id":"364806029876555776"}`)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		tok := "eyJhbGciOiJIUzI1NiJ9." + enc.EncodeToString(payload) + ".c2ln"
		require.Equal(t, legacyTokenHint, tokenHint(tok))
	}
	// A payload whose base64 differs between alphabets.
	odd := []byte(`{"bot":true,"x":"???>>>"}`)
	require.Equal(t, legacyTokenHint, tokenHint("h."+base64.StdEncoding.EncodeToString(odd)+".s"))
	require.Equal(t, legacyTokenHint, tokenHint("h."+base64.RawURLEncoding.EncodeToString(odd)+".s"))

	for _, tok := range []string{
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`{"_t":"","bot":true}`)) + ".s",
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`{"bot":null}`)) + ".s",
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`{"bot":{}}`)) + ".s",
		"h." + base64.RawURLEncoding.EncodeToString([]byte(`not json`)) + ".s",
		"h.!!!.s", "only.two", "a.b.c.d", "opaque-token", "",
	} {
		require.Empty(t, tokenHint(tok), tok)
	}
}

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
	r := &call{route: routeMetrics}
	apiErr := &APIError{StatusCode: http.StatusTooManyRequests}
	rl := &RateLimitError{API: apiErr}
	b.Run("ok", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			c.observe(b.Context(), r, 1, http.StatusNoContent, time.Since(start), nil)
		}
	})
	b.Run("rate_limited", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			c.observe(b.Context(), r, 1, http.StatusTooManyRequests, time.Since(start), rl)
		}
	})
}
