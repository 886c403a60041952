package voterewards_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/conc/panics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

var errHandler = errors.New("reward service down")

func TestFailingAndPanickingHandlersAreRetriedThenGivenUp(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	// User 1: a vote that always fails, then a later one. User 2: a vote
	// that panics twice, then works. User 3: a vote that always panics.
	// One user's votes are 12 h apart, or they would be one vote.
	failing := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(-26 * time.Hour)}
	afterFailing := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(-14 * time.Hour)}
	flaky := topggtest.Vote{UserID: userID(2), PlatformID: platformID(2), CreatedAt: now.Add(-3 * time.Hour)}
	panicking := topggtest.Vote{UserID: userID(3), PlatformID: platformID(3), CreatedAt: now.Add(-3 * time.Hour)}
	fine := topggtest.Vote{UserID: userID(4), PlatformID: platformID(4), CreatedAt: now.Add(-time.Hour)}
	srv.AddVote(failing, afterFailing, flaky, panicking, fine)

	var mu sync.Mutex
	attempts := map[string]int{}
	delivered := map[string]time.Time{}
	gaveUp := map[string]error{}
	gaveUpAt := map[string]time.Time{}
	handle := func(_ context.Context, v voterewards.Vote) error {
		mu.Lock()
		attempts[v.Key()]++
		n := attempts[v.Key()]
		mu.Unlock()
		switch v.Key() {
		case keyOf(failing):
			return errHandler
		case keyOf(flaky):
			if n <= 2 {
				panic("flaky reward")
			}
		case keyOf(panicking):
			panic(errHandler)
		}
		mu.Lock()
		delivered[v.Key()] = time.Now()
		mu.Unlock()
		return nil
	}
	onGiveUp := func(v voterewards.Vote, err error) {
		mu.Lock()
		defer mu.Unlock()
		gaveUp[v.Key()] = err
		if _, ok := gaveUpAt[v.Key()]; !ok {
			gaveUpAt[v.Key()] = time.Now()
		}
	}
	store := voterewards.NewMemoryStore()
	cfg := voterewards.Config{OnReward: handle, OnGiveUp: onGiveUp, Store: store, MaxAttempts: 3, Lookback: 27 * time.Hour}
	p, stop := runPoller(t, newClient(t, srv), cfg)

	done := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(delivered) == 3 && len(gaveUp) == 2
	}
	require.Eventually(t, done, 5*time.Second, 5*time.Millisecond)
	mu.Lock()
	assert.Equal(t, 3, attempts[keyOf(flaky)])
	assert.Equal(t, 1, attempts[keyOf(fine)])
	assert.Equal(t, 1, attempts[keyOf(afterFailing)])
	mu.Unlock()
	// Later votes still come.
	later := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now()}
	srv.AddVote(later)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !delivered[keyOf(later)].IsZero()
	}, 5*time.Second, 5*time.Millisecond)
	assert.True(t, p.Active(userID(1)).Active)
	require.NoError(t, stop())
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{keyOf(failing), keyOf(panicking)}, keys(snap.Pending),
		"what failed every attempt is not recorded as done")

	// A restart on the same store delivers again what was given up, and
	// nothing else.
	mu.Lock()
	clear(attempts)
	mu.Unlock()
	p2, stop2 := runPoller(t, newClient(t, srv), cfg)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return attempts[keyOf(failing)] == 3 && attempts[keyOf(panicking)] == 3
	}, 5*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return p2.Active(userID(1)).Covered }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, stop2())

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 3, attempts[keyOf(failing)])
	assert.Equal(t, 3, attempts[keyOf(panicking)])
	assert.Zero(t, attempts[keyOf(flaky)]+attempts[keyOf(fine)]+attempts[keyOf(afterFailing)]+attempts[keyOf(later)],
		"what was delivered is not delivered again")

	var derr *voterewards.DeliveryError
	require.ErrorAs(t, gaveUp[keyOf(failing)], &derr)
	assert.False(t, derr.Expiry)
	assert.Contains(t, derr.Error(), "failed 3 time(s)")
	assert.False(t, derr.Recording)
	assert.ErrorIs(t, derr, errHandler)
	var perr *panics.ErrRecovered
	require.ErrorAs(t, gaveUp[keyOf(panicking)], &perr)
	assert.ErrorIs(t, gaveUp[keyOf(panicking)], errHandler)
	assert.NotEmpty(t, perr.Stack)
	// The user's next vote waited for the failing one, then was delivered.
	assert.True(t, delivered[keyOf(afterFailing)].After(gaveUpAt[keyOf(failing)]))

}

func TestVotesOfOneUserNeverOverlapAndGoOldestFirst(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	// One user's votes are 12 h apart, or they would be one vote.
	const users, each = 12, 15
	for i := range users * each {
		u, n := i%users, i/users
		srv.AddVote(topggtest.Vote{UserID: userID(u), PlatformID: platformID(u),
			CreatedAt: now.Add(-time.Duration(each-n)*12*time.Hour + time.Duration(i)*time.Second)})
	}
	var (
		mu          sync.Mutex
		running     = map[string]bool{}
		last        = map[string]time.Time{}
		handled     int
		inFlight    atomic.Int32
		maxInFlight atomic.Int32
	)
	handle := func(_ context.Context, v voterewards.Vote) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		assert.False(t, running[v.UserID], "two votes of user %s at once", v.UserID)
		assert.True(t, v.CreatedAt.After(last[v.UserID]), "user %s: %s after %s", v.UserID, v.CreatedAt, last[v.UserID])
		running[v.UserID] = true
		last[v.UserID] = v.CreatedAt
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		running[v.UserID] = false
		handled++
		mu.Unlock()
		return nil
	}
	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: handle, Store: voterewards.NewMemoryStore(), Concurrency: 4,
		Lookback: (each + 1) * 12 * time.Hour})
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return handled == users*each
	}, 10*time.Second, 5*time.Millisecond)
	assert.LessOrEqual(t, maxInFlight.Load(), int32(4))
	assert.Greater(t, maxInFlight.Load(), int32(1), "users are handled in parallel")
}

func TestGracePeriodThenCancelsHandlersAndKeepsTheVote(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	v := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-time.Hour)}
	srv.AddVote(v)
	store := voterewards.NewMemoryStore()
	started := make(chan struct{})
	clk := clock.NewFake(time.Now())
	var cancelledAt atomic.Pointer[time.Time] // on the poller's clock
	stuck := func(ctx context.Context, _ voterewards.Vote) error {
		close(started)
		<-ctx.Done()
		at := clk.Now()
		cancelledAt.Store(&at)
		return ctx.Err()
	}
	cfg := voterewards.WithClock(voterewards.Config{OnReward: stuck, Store: store, GracePeriod: time.Minute}, clk)
	p, err := voterewards.New(newClient(t, srv), cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	<-started
	stoppedAt := clk.Now()
	cancel()
	// Run waits for the handler through the grace period, on the clock: it
	// returns only once the clock is moved on. (The grace timer is made as
	// the loops stop theirs, so the test moves the clock until Run returns
	// and checks when the handler's context ended.)
	runErr := awaitAdvancing(t, clk, 10*time.Second, done, "Run did not return after the grace period")
	require.NoError(t, runErr, "a stop is clean even when handlers had to be cancelled")
	at := cancelledAt.Load()
	require.NotNil(t, at, "the handler's context was cancelled")
	assert.False(t, at.Before(stoppedAt.Add(time.Minute)), "the handler's context lives through the grace period: cancelled at %s, stopped at %s", at, stoppedAt)

	// The vote was not delivered, so the next run delivers it.
	rec := newRecorder()
	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: store})
	requireExactlyOnce(t, srv, rec)
}

func TestRunStopsWithContext(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-time.Hour)})
	rec := newRecorder()
	p, err := voterewards.New(newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(), Interval: 10 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	requireExactlyOnce(t, srv, rec)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// reversedStore loads its pending work newest first: the Store contract
// leaves the order to the Poller.
type reversedStore struct{ voterewards.Store }

func (s reversedStore) Load(ctx context.Context) (*voterewards.Snapshot, error) {
	snap, err := s.Store.Load(ctx)
	if err == nil {
		slices.SortFunc(snap.Pending, func(a, b voterewards.Vote) int { return b.CreatedAt.Compare(a.CreatedAt) })
		slices.SortFunc(snap.Expiries, func(a, b voterewards.Vote) int { return b.ExpiresAt.Compare(a.ExpiresAt) })
	}
	return snap, err
}

// TestPendingWorkInEventOrderWhateverTheStoreOrder: the work a store holds,
// in whatever order it loads, is delivered per user in event order: a vote's
// expiry before the reward of the user's next vote, rewards oldest first.
func TestPendingWorkInEventOrderWhateverTheStoreOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now().UTC().Round(0)
	store := voterewards.NewMemoryStore()
	var votes []voterewards.Vote
	for i, ago := range []time.Duration{50 * time.Hour, 37 * time.Hour, 25 * time.Hour, time.Hour} {
		tv := topgg.Vote{UserID: userID(1), PlatformID: platformID(1), Weight: 1, CreatedAt: now.Add(-ago)}
		tv.ExpiresAt = tv.CreatedAt.Add(voterewards.VoteLifetime)
		votes = append(votes, voterewards.Vote{Vote: tv, Origin: voterewards.OriginHistory})
		_, err := store.Ingest(ctx, nil, votes[i:], voterewards.DefaultStreakGrace)
		require.NoError(t, err)
	}
	for _, v := range votes[:2] { // delivered, their expiries pending
		require.NoError(t, store.Delivered(ctx, v, true))
	}
	var mu sync.Mutex
	var got []string
	record := func(what string) voterewards.Handler {
		return func(_ context.Context, v voterewards.Vote) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, what+" "+v.Key())
			return nil
		}
	}
	startPoller(t, newClient(t, newServer(t)), voterewards.Config{OnReward: record("reward"), OnExpire: record("expire"),
		Store: reversedStore{store}, Concurrency: 4})
	want := []string{"expire " + votes[0].Key(), "expire " + votes[1].Key(), "reward " + votes[2].Key(),
		"expire " + votes[2].Key(), "reward " + votes[3].Key()}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= len(want)
	}, 5*time.Second, 5*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, want, got)
}

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

// TestNoHandlerCallOnceTheTermEnded: a fleet leader's term deadline passes
// during its first reward handler call (a pause), while nothing has
// cancelled its context yet: no other handler is called and no further
// history request is sent in that Run, whatever timers were due (the first
// check that fails ends the term, and so the Run); the votes stay pending,
// and the next Run (the next leader) rewards each of them once.
func TestNoHandlerCallOnceTheTermEnded(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	for u := range 5 {
		srv.AddVote(topggtest.Vote{UserID: userID(u), PlatformID: platformID(u), Weight: 1,
			CreatedAt: time.Now().Add(-time.Hour), ExpiresAt: time.Now().Add(11 * time.Hour)})
	}
	store := voterewards.NewMemoryStore()
	rec := newRecorder()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	start := time.Unix(1_700_000_000, 0)
	clk := clock.NewFake(start) // the term's clock: no timer of its own fires
	tm := clock.NewTerm(clk, start.Add(time.Second), cancel)
	p, err := voterewards.New(newClient(t, srv), voterewards.Config{Store: store, Concurrency: 1,
		Interval: 10 * time.Millisecond, RetryDelay: time.Millisecond,
		OnReward: func(ctx context.Context, v voterewards.Vote) error {
			clk.Advance(time.Second) // a pause: the deadline passes during this call
			polls := len(votesRequests(srv))
			time.Sleep(30 * time.Millisecond) // three poll intervals: due, and never sent
			assert.Equal(t, polls, len(votesRequests(srv)), "a poll went out after the term ended")
			return rec.handle(ctx, v)
		}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- p.Run(clock.WithTerm(ctx, tm)) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run went on after its term ended")
	}
	require.Equal(t, 1, rec.total(), "a handler was called after the term ended")

	// The next leader (no term here: one process) rewards the others, once each.
	next, err := voterewards.New(newClient(t, srv), voterewards.Config{Store: store, Interval: 10 * time.Millisecond,
		OnReward: rec.handle})
	require.NoError(t, err)
	stop := goRun(t, next.Run)
	defer func() { _ = stop() }()
	requireExactlyOnce(t, srv, rec)
}
