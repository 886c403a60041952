package voterewards_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// runGoroutines counts the goroutines running code of a Run (its workers and
// waiters), from a dump of every goroutine's stack.
func runGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "voterewards.(*run).") {
			count++
		}
	}
	return count
}

// TestGracePeriodHoldsWhenAHandlerIgnoresItsContext: handlers that block on
// a channel and never look at ctx must not hold Run past GracePeriod +
// CancelWait (on the poller's clock); the goroutines left behind are at most
// bounded by Concurrency; what the handlers return later is dropped
// (the votes stay pending, no event reaches the observer after Run).
//
// Not parallel: it counts the goroutines of every Run in the process.
func TestGracePeriodHoldsWhenAHandlerIgnoresItsContext(t *testing.T) {
	srv := newServer(t)
	for i := range 4 {
		srv.AddVote(topggtest.Vote{UserID: userID(i), PlatformID: platformID(i), CreatedAt: time.Now().Add(-time.Hour)})
	}
	store := voterewards.NewMemoryStore()
	clk := clock.NewFake(time.Now())
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before goleak looks, whatever happens
	var inside atomic.Int32
	deaf := func(context.Context, voterewards.Vote) error {
		inside.Add(1)
		<-release // ignores ctx
		return nil
	}
	var returned atomic.Bool
	var lateEvents atomic.Int32
	observer := func(e voterewards.Event) {
		if returned.Load() && e.Type != voterewards.EventPending {
			lateEvents.Add(1)
		}
	}
	var logs testlog.Buffer
	const grace = time.Minute
	cfg := voterewards.WithClock(voterewards.Config{OnReward: deaf, Store: store, GracePeriod: grace, Concurrency: 2,
		Observer: observer, Logger: logs.Logger()}, clk)
	p, err := voterewards.New(newClient(t, srv), cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	require.Eventually(t, func() bool { return inside.Load() == 2 }, 5*time.Second, time.Millisecond)
	stoppedAt := clk.Now()
	cancel()

	runErr := awaitAdvancing(t, clk, 100*time.Millisecond, done, "Run waits for handlers that ignore their context")
	returned.Store(true)
	require.NoError(t, runErr)
	assert.LessOrEqual(t, clk.Now().Sub(stoppedAt), grace+voterewards.CancelWait+200*time.Millisecond,
		"Run returned past GracePeriod + CancelWait")
	assert.Contains(t, logs.String(), "ignored their cancelled context")
	// Left behind: one per worker (in the deaf handler), the loops that wait
	// for a worker to queue the next vote (fetch, intake, expiry), and the
	// waiter: bounded by Concurrency, not by the votes or the Runs' length.
	assert.LessOrEqual(t, runGoroutines(), 2+3+1)

	// The late successes are dropped: the votes stay pending for the next
	// Run, and the observer hears nothing more.
	unblock()
	require.Eventually(t, func() bool { return runGoroutines() == 0 }, 5*time.Second, time.Millisecond)
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	assert.Len(t, snap.Pending, 4, "no late result recorded")
	assert.Zero(t, lateEvents.Load())
	assert.Equal(t, int32(2), inside.Load(), "no handler call started after the stop")
}

// TestExpiryAndGiveUpHandlerPanicsAreContained: a panicking OnExpire is a
// failed call (retried, then given up and counted, the vote kept pending),
// and a panicking OnGiveUp is logged by name; neither ends Run nor stops
// the other users' deliveries.
func TestExpiryAndGiveUpHandlerPanicsAreContained(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	expired := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(-13 * time.Hour)}
	later := topggtest.Vote{UserID: userID(2), PlatformID: platformID(2), CreatedAt: now.Add(-time.Hour)}
	srv.AddVote(expired, later)
	var rewarded, expiries, giveUps, givenUpEvents atomic.Int32
	var logs testlog.Buffer
	store := voterewards.NewMemoryStore()
	cfg := voterewards.Config{Store: store, MaxAttempts: 2, Lookback: 14 * time.Hour, Logger: logs.Logger(),
		OnReward: func(context.Context, voterewards.Vote) error { rewarded.Add(1); return nil },
		OnExpire: func(context.Context, voterewards.Vote) error { expiries.Add(1); panic("expiry bug") },
		OnGiveUp: func(voterewards.Vote, error) { giveUps.Add(1); panic("give-up bug") },
		Observer: func(e voterewards.Event) {
			if e.Type == voterewards.EventGivenUp && e.Kind == voterewards.KindExpiry {
				givenUpEvents.Add(1)
			}
		}}
	_, stop := runPoller(t, newClient(t, srv), cfg)
	require.Eventually(t, func() bool { return rewarded.Load() == 2 && giveUps.Load() == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, int32(2), expiries.Load(), "a panic is a failed attempt: retried up to MaxAttempts")
	assert.Equal(t, int32(1), givenUpEvents.Load(), "the observer counts the give-up")
	require.NoError(t, stop())
	out := logs.String()
	assert.Contains(t, out, "expiry bug")
	assert.Contains(t, out, "OnGiveUp panicked")
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	var keys []string
	for _, v := range snap.Expiries {
		keys = append(keys, v.Key())
	}
	assert.Contains(t, keys, keyOf(expired), "the expiry stays pending for the next Run")
}
