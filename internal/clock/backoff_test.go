package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
)

func TestExpDoublesWithinJitterAndCaps(t *testing.T) {
	t.Parallel()
	first, limit := 100*time.Millisecond, time.Second
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 50: time.Second} {
		for range 200 {
			got := clock.Backoff(n, first, limit)
			require.GreaterOrEqual(t, got, want/2, "retry %d", n)
			require.LessOrEqual(t, got, want, "retry %d", n)
		}
	}
	assert.Zero(t, clock.Backoff(3, 0, time.Second))
	// A huge cap must not overflow the doubling into a negative or zero wait.
	const huge = time.Duration(1<<63 - 1)
	for n := 1; n < 80; n++ {
		require.Positive(t, clock.Backoff(n, time.Second, huge), "retry %d", n)
	}
}

func TestSleepStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- clock.Sleep(ctx, clock.Real(), time.Hour) }()
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Sleep did not return after cancel")
	}
	require.NoError(t, clock.Sleep(context.Background(), clock.Real(), time.Millisecond))
	require.ErrorIs(t, clock.Sleep(ctx, clock.Real(), 0), context.Canceled)
}
