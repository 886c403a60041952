package clock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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

var start = time.Date(2026, 11, 25, 17, 0, 0, 0, time.UTC)

// ender counts the calls of a term's end function and keeps the first cause.
type ender struct {
	calls atomic.Int32
	cause atomic.Pointer[error]
}

func (e *ender) end(cause error) {
	e.calls.Add(1)
	e.cause.CompareAndSwap(nil, &cause)
}

func TestCheckPassesUntilTheDeadlineThenEndsTheTerm(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	var e ender
	tm := clock.NewTerm(clk, start.Add(time.Second), e.end)
	ctx := clock.WithTerm(context.Background(), tm)

	require.NoError(t, clock.CheckTerm(ctx))
	clk.Advance(999 * time.Millisecond)
	require.NoError(t, clock.CheckTerm(ctx), "1 ms before the deadline")
	left, ok := tm.Left()
	assert.True(t, ok)
	assert.Equal(t, time.Millisecond, left)
	assert.Zero(t, e.calls.Load(), "ended while valid")

	clk.Advance(time.Millisecond)
	err := clock.CheckTerm(ctx)
	require.ErrorIs(t, err, clock.ErrTermOver, "at the deadline the term is over")
	assert.Equal(t, int32(1), e.calls.Load(), "the first failed check ends the term")
	require.NotNil(t, e.cause.Load())
	assert.ErrorIs(t, *e.cause.Load(), clock.ErrTermOver, "the end's cause says why")

	// Over for good: a later check fails without ending it again, and the
	// deadline cannot be moved back.
	tm.Extend(start.Add(time.Hour))
	require.ErrorIs(t, clock.CheckTerm(ctx), clock.ErrTermOver, "extended after it ended")
	_, ok = tm.Left()
	assert.False(t, ok)
	assert.Equal(t, int32(1), e.calls.Load())
}

func TestExtendMovesTheDeadlineOnlyForward(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	tm := clock.NewTerm(clk, start.Add(time.Second), nil) // a nil end function is allowed
	tm.Extend(start.Add(3 * time.Second))
	tm.Extend(start.Add(2 * time.Second)) // an older renewal's answer, late: ignored
	clk.Advance(2500 * time.Millisecond)
	require.NoError(t, tm.Check(), "the later deadline was lost to an older one")
	clk.Advance(500 * time.Millisecond)
	require.ErrorIs(t, tm.Check(), clock.ErrTermOver)
}

func TestEndStopsTheTermAtOnce(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	var e ender
	tm := clock.NewTerm(clk, start.Add(time.Hour), e.end)
	lost := errors.New("the lease is held by another process")
	tm.End(lost)
	tm.End(errors.New("again"))
	require.ErrorIs(t, tm.Check(), clock.ErrTermOver, "an hour left, but the lease was lost")
	assert.Equal(t, int32(1), e.calls.Load(), "the end function is called once")
	assert.Equal(t, lost, *e.cause.Load())
}

func TestCheckWithoutATermPasses(t *testing.T) {
	t.Parallel()
	// One process, or a job run outside a fleet leader: always allowed.
	require.NoError(t, clock.CheckTerm(context.Background()))
	assert.Nil(t, clock.TermFrom(context.Background()))
	// A context derived from the leader's keeps its clock.
	clk := clock.NewFake(start)
	tm := clock.NewTerm(clk, start, nil)
	ctx, cancel := context.WithCancel(context.WithoutCancel(clock.WithTerm(context.Background(), tm)))
	defer cancel()
	assert.Same(t, tm, clock.TermFrom(ctx))
	require.ErrorIs(t, clock.CheckTerm(ctx), clock.ErrTermOver, "a deadline of now is passed")
}

// TestCheckOnTheRealClock: a term whose deadline is read on the real clock
// expires by itself, with no timer and no renewal.
func TestCheckOnTheRealClock(t *testing.T) {
	t.Parallel()
	tm := clock.NewTerm(nil, time.Now().Add(20*time.Millisecond), nil)
	require.NoError(t, tm.Check())
	require.Eventually(t, func() bool { return errors.Is(tm.Check(), clock.ErrTermOver) }, 5*time.Second, time.Millisecond)
}

// TestConcurrentUse runs renewals, checks and an end at once (under -race):
// once End returned, no Check passes.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	var e ender
	tm := clock.NewTerm(clk, start.Add(time.Second), e.end)
	var wg sync.WaitGroup
	var endedFlag atomic.Bool
	for i := range 4 {
		wg.Go(func() {
			for n := range 1000 {
				tm.Extend(start.Add(time.Duration(i*1000+n) * time.Millisecond))
			}
		})
		wg.Go(func() {
			for range 1000 {
				wasEnded := endedFlag.Load()
				if err := tm.Check(); err == nil {
					assert.False(t, wasEnded, "a check passed after End")
				}
			}
		})
	}
	wg.Go(func() {
		tm.End(errors.New("lost"))
		endedFlag.Store(true)
	})
	wg.Wait()
	require.ErrorIs(t, tm.Check(), clock.ErrTermOver)
	assert.Equal(t, int32(1), e.calls.Load())
}

func BenchmarkCheck(b *testing.B) {
	tm := clock.NewTerm(nil, time.Now().Add(time.Hour), nil)
	ctx, cancel := context.WithCancel(clock.WithTerm(context.Background(), tm))
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if err := clock.CheckTerm(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExtendFarAheadKeepsTheTerm: a deadline too far to count in
// nanoseconds from the first (a lease TTL of centuries) saturates; the
// term stays valid, it does not wrap around into an ended one.
func TestExtendFarAheadKeepsTheTerm(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	var e ender
	tm := clock.NewTerm(clk, start.Add(time.Hour), e.end)
	tm.Extend(start.Add(time.Hour).AddDate(300, 0, 0))
	require.NoError(t, tm.Check(), "a deadline 300 years ahead")
	left, ok := tm.Left()
	assert.True(t, ok)
	assert.Positive(t, left)
	clk.Advance(2 * time.Hour)
	require.NoError(t, tm.Check(), "past the first deadline, before the extended one")
	assert.Zero(t, e.calls.Load())
}

// TestMisuseFailsClosed: a nil or zero Term (not made by New), or a
// context given a nil one, is no valid term: every check fails with
// ErrOver, none panics, and nothing is let through as if there were no
// fleet.
func TestMisuseFailsClosed(t *testing.T) {
	t.Parallel()
	var nilTerm *clock.Term
	for name, tm := range map[string]*clock.Term{"nil": nilTerm, "zero": {}} {
		assert.NotPanics(t, func() {
			assert.ErrorIs(t, tm.Check(), clock.ErrTermOver, name)
			_, ok := tm.Left()
			assert.False(t, ok, name)
			tm.Extend(start.Add(time.Hour))
			tm.End(errors.New("done"))
			assert.ErrorIs(t, clock.CheckTerm(clock.WithTerm(context.Background(), tm)), clock.ErrTermOver, "%s, in a context", name)
		}, name)
	}
	assert.NoError(t, clock.CheckTerm(context.Background()), "no term at all: one process")
}
