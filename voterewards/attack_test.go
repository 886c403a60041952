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

	var runErr error
	require.Eventually(t, func() bool {
		select {
		case runErr = <-done:
			return true
		default:
			clk.Advance(100 * time.Millisecond)
			return false
		}
	}, 5*time.Second, time.Millisecond, "Run waits for handlers that ignore their context")
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
