package autopost

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

func testPoster(t *testing.T, cfg Config) *Poster {
	t.Helper()
	// A client of a fake on this machine: no interval floor; it sends nothing.
	c, err := topgg.New("test-token", topgg.WithBaseURL("http://127.0.0.1:1/api"))
	require.NoError(t, err)
	p, err := New(c, cfg)
	require.NoError(t, err)
	return p
}

// TestKeepSampleBounded: one sample per interval, at most MaxBackfill, the
// oldest dropped.
func TestKeepSampleBounded(t *testing.T) {
	t.Parallel()
	p := testPoster(t, Config{Interval: time.Minute})
	var l loop
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 150 {
		at := base.Add(time.Duration(i) * time.Minute)
		p.keepSample(&l, Counts{Servers: i, Shards: 1}, at)
		// A second failure within the same interval keeps no sample.
		p.keepSample(&l, Counts{Servers: -1, Shards: 1}, at.Add(30*time.Second))
	}
	require.Len(t, l.samples, maxBackfill)
	for i, s := range l.samples {
		assert.Equal(t, base.Add(time.Duration(50+i)*time.Minute), s.Timestamp)
		assert.Equal(t, 50+i, *s.Metrics.(topgg.BotMetrics).ServerCount)
	}
}

func TestKeepSampleConfiguredBound(t *testing.T) {
	t.Parallel()
	p := testPoster(t, Config{Interval: time.Minute, MaxBackfill: 3})
	var l loop
	base := time.Now()
	for i := range 10 {
		p.keepSample(&l, Counts{Servers: i}, base.Add(time.Duration(i)*time.Minute))
	}
	require.Len(t, l.samples, 3)
	assert.Equal(t, 7, *l.samples[0].Metrics.(topgg.BotMetrics).ServerCount)
}

// TestFailureWaitCapped: from a sixteenth of the interval (at most a minute),
// doubling, capped at the interval, less up to half of random jitter.
func TestFailureWaitCapped(t *testing.T) {
	t.Parallel()
	for _, interval := range []time.Duration{50 * time.Millisecond, 30 * time.Minute} {
		p := testPoster(t, Config{Interval: interval})
		first := min(interval/16, time.Minute)
		for n := 1; n < 40; n++ {
			d := p.failureWait(n)
			assert.Positive(t, d)
			assert.LessOrEqual(t, d, interval, "n=%d", n)
			if n == 1 {
				assert.LessOrEqual(t, d, first)
				assert.GreaterOrEqual(t, d, first/2)
			}
		}
		assert.GreaterOrEqual(t, p.failureWait(39), interval/2)
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := Config{}.withDefaults(false)
	require.NoError(t, err)
	assert.Same(t, slog.Default(), c.Logger, "a library user sees the warnings by default")
	assert.Equal(t, defaultInterval, c.Interval)
	assert.Equal(t, defaultRefresh, c.Refresh)
	assert.Equal(t, defaultReadyTimeout, c.ReadyTimeout)
	assert.Equal(t, maxBackfill, c.MaxBackfill)
	assert.NotNil(t, c.Logger)

	c, err = Config{Interval: time.Hour, Refresh: time.Minute, MaxBackfill: -1}.withDefaults(false)
	require.NoError(t, err)
	assert.Equal(t, time.Hour, c.Refresh, "Refresh is at least Interval")
	assert.Equal(t, 0, c.MaxBackfill)

	for _, bad := range []Config{
		{Interval: -1}, {Refresh: -1}, {ReadyTimeout: -1}, {ShardCount: -1}, {MaxBackfill: 101}, {Mode: 7},
		{Interval: MinInterval - time.Second},
	} {
		_, err := bad.withDefaults(false)
		assert.Error(t, err, "%+v", bad)
	}
	// The floor protects the real service; a fake on this machine has none.
	c, err = Config{Interval: time.Millisecond}.withDefaults(true)
	require.NoError(t, err)
	assert.Equal(t, time.Millisecond, c.Interval)
}
