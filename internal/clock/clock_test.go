package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testkit"
)

func TestFakeFiresTimersInOrderWhenAdvanced(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := clock.NewFake(t0)
	a, b := f.NewTimer(2*time.Second), f.NewTimer(time.Second)
	require.Equal(t, 2, f.Timers())

	f.Advance(time.Second)
	select {
	case got := <-b.C():
		assert.Equal(t, t0.Add(time.Second), got)
	default:
		t.Fatal("the 1 s timer did not fire at 1 s")
	}
	select {
	case <-a.C():
		t.Fatal("the 2 s timer fired at 1 s")
	default:
	}
	assert.True(t, a.Stop())
	assert.False(t, a.Stop())
	assert.Zero(t, f.Timers())
	f.Advance(time.Hour)
	select {
	case <-a.C():
		t.Fatal("a stopped timer fired")
	default:
	}
}

func TestSleepEndsOnAdvanceOrCancel(t *testing.T) {
	f := clock.NewFake(time.Unix(0, 0))
	done := make(chan error, 1)
	go func() { done <- clock.Sleep(context.Background(), f, time.Minute) }()
	require.Eventually(t, func() bool { return f.Timers() == 1 }, 5*time.Second, time.Millisecond)
	f.Advance(time.Minute)
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)

	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- clock.Sleep(ctx, f, time.Minute) }()
	require.Eventually(t, func() bool { return f.Timers() == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.Zero(t, f.Timers(), "Sleep stops its timer")
}

func TestOrDefaultsToRealClock(t *testing.T) {
	c := clock.Or(nil)
	assert.WithinDuration(t, time.Now(), c.Now(), time.Second)
	tm := c.NewTimer(0)
	<-tm.C()
}

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
	require.ErrorIs(t, testkit.Recv(t, done, "Sleep did not return after cancel"), context.Canceled)
	require.NoError(t, clock.Sleep(context.Background(), clock.Real(), time.Millisecond))
	require.ErrorIs(t, clock.Sleep(ctx, clock.Real(), 0), context.Canceled)
}
