package topgg

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
)

func newFakeClock() *clock.Fake {
	return clock.NewFake(time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC))
}

// waitLegacy takes a v0 slot for an unblocked family; see acquire.
func (l *limits) waitLegacy(ctx context.Context) (legacySlot, error) {
	return l.acquire(ctx, &call{legacy: true, family: "v0"}, 0)
}

// check returns the remaining block of family, or 0.
func (l *limits) check(family string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkLocked(family, l.clk.Now())
}

func TestLimitsBlock(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLimits(clk, 0, 0)

	left := l.check("a")
	require.Zero(t, left)

	until := l.block("a", time.Minute)
	require.Equal(t, clk.Now().Add(time.Minute), until)
	left = l.check("a")
	require.Equal(t, time.Minute, left)
	left = l.check("b")
	require.Zero(t, left, "families are separate")

	// A shorter block never shortens a longer one; a longer one extends it.
	require.Equal(t, until, l.block("a", time.Second))
	clk.Advance(30 * time.Second)
	left = l.check("a")
	require.Equal(t, 30*time.Second, left)
	require.Equal(t, clk.Now().Add(time.Hour), l.block("a", time.Hour))

	clk.Advance(time.Hour)
	left = l.check("a")
	require.Zero(t, left, "the block ends at its end")
	require.Empty(t, l.blocked, "an ended block is forgotten")
}

func TestLegacyWindow(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLimits(clk, 3, time.Minute)
	ctx := t.Context()

	take := func() error {
		slot, err := l.waitLegacy(ctx)
		if err == nil {
			l.doneLegacy(slot)
		}
		return err
	}
	for range 3 {
		require.NoError(t, take())
		clk.Advance(10 * time.Second)
	}
	// 3 taken at 0 s, 10 s, 20 s; at 30 s the fourth must wait for 60 s.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err := l.waitLegacy(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	clk.Advance(30 * time.Second) // 60 s: the first slot is free again
	require.NoError(t, take())
	short2, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel2()
	_, err = l.waitLegacy(short2)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the second slot frees at 70 s")
	clk.Advance(10 * time.Second)
	require.NoError(t, take())
}

func TestLegacyWindowCountsFromTheAnswer(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLimits(clk, 1, time.Minute)

	slot, err := l.waitLegacy(t.Context())
	require.NoError(t, err)
	clk.Advance(5 * time.Second) // the request takes 5 s
	l.doneLegacy(slot)

	clk.Advance(56 * time.Second) // 61 s after the send, 56 s after the answer
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err = l.waitLegacy(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	clk.Advance(4 * time.Second)
	_, err = l.waitLegacy(t.Context())
	require.NoError(t, err)
}

func TestLegacyWindowOff(t *testing.T) {
	t.Parallel()
	l := newLimits(clock.Real(), 0, 0)
	for range 1000 {
		slot, err := l.waitLegacy(t.Context())
		require.NoError(t, err)
		require.Negative(t, slot.i)
		l.doneLegacy(slot)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := l.waitLegacy(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// TestLegacyWindowCancelledTakesNoSlot: a call whose context is already done
// must not use up a slot of the window.
func TestLegacyWindowCancelledTakesNoSlot(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLimits(clk, 1, time.Minute)

	done, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := l.waitLegacy(done)
	require.ErrorIs(t, err, context.Canceled)

	// The clock stands still: only a free slot lets this through.
	short, cancel2 := context.WithTimeout(t.Context(), time.Second)
	defer cancel2()
	slot, err := l.waitLegacy(short)
	require.NoError(t, err, "the cancelled call took the only slot")
	l.doneLegacy(slot)
}

// TestAcquireBlockedTakesNoSlot: a call refused by a block leaves the window's
// slots to the calls that are sent.
func TestAcquireBlockedTakesNoSlot(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLimits(clk, 1, time.Minute)
	l.block("v0", time.Hour)

	_, err := l.acquire(t.Context(), &call{route: routeBot, id: "1", legacy: true, family: "v0"}, 0)
	var rl *RateLimitError
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local)
	require.Equal(t, "GET /bots/1", rl.Op)
	require.Equal(t, time.Hour, rl.RetryAfter)

	clk.Advance(time.Hour)
	short, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err = l.waitLegacy(short)
	require.NoError(t, err, "the refused call took the only slot")
}

// TestAcquireWaitsOutAShortBlock: a call with a budget waits a block that fits in
// it and goes out at its end; a longer one, or blocks renewed past the budget,
// refuse it locally. Nothing passes before the block ends.
func TestAcquireWaitsOutAShortBlock(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLimits(clk, 0, 0)
	r := &call{route: routeMetrics, family: "v1:metrics"}
	l.block(r.family, 3*time.Second)

	done := make(chan error, 1)
	go func() {
		_, err := l.acquire(t.Context(), r, 5*time.Second)
		done <- err
	}()
	require.Eventually(t, func() bool { return clk.Timers() == 1 }, 5*time.Second, time.Millisecond)
	clk.Advance(2 * time.Second)
	require.Never(t, func() bool { return len(done) > 0 }, 50*time.Millisecond, time.Millisecond, "still blocked")
	clk.Advance(time.Second)
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)

	// Renewed while it waits: the second wait would pass the budget.
	l.block(r.family, 3*time.Second)
	go func() {
		_, err := l.acquire(t.Context(), r, 5*time.Second)
		done <- err
	}()
	require.Eventually(t, func() bool { return clk.Timers() == 1 }, 5*time.Second, time.Millisecond)
	l.block(r.family, 6*time.Second) // ends 3 s after the first wait would
	clk.Advance(3 * time.Second)
	err := <-done
	var rl *RateLimitError
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local)
	require.Equal(t, 3*time.Second, rl.RetryAfter)

	// No budget (a call sent once): refused at once.
	_, err = l.acquire(t.Context(), r, 0)
	require.ErrorAs(t, err, &rl)
	require.Zero(t, clk.Timers())
}
