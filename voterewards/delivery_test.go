package voterewards_test

import (
	"context"
	"errors"
	"fmt"
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

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testkit"
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
	srv, _ := serverWithVote(t)
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
			// Three poll intervals: due, and never sent.
			assert.Never(t, func() bool { return len(votesRequests(srv)) != polls }, 30*time.Millisecond, time.Millisecond,
				"a poll went out after the term ended")
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

// outageStore is a memory store whose every call fails while down is set,
// as a database does while it restarts.
type outageStore struct {
	*voterewards.MemoryStore
	down atomic.Bool
}

func (s *outageStore) Load(ctx context.Context) (*voterewards.Snapshot, error) {
	if s.down.Load() {
		return nil, errStoreDown
	}
	return s.MemoryStore.Load(ctx)
}

func (s *outageStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	if s.down.Load() {
		return nil, errStoreDown
	}
	return s.MemoryStore.Ingest(ctx, cp, votes, grace)
}

func (s *outageStore) Delivered(ctx context.Context, v voterewards.Vote, expire bool) error {
	if s.down.Load() {
		return errStoreDown
	}
	return s.MemoryStore.Delivered(ctx, v, expire)
}

// addOldVotes adds n votes by n voters, an hour old, to srv.
func addOldVotes(srv *topggtest.Server, n int) {
	for i := range n {
		srv.AddVote(topggtest.Vote{UserID: userID(i), PlatformID: platformID(i), Weight: 1,
			CreatedAt: time.Now().Add(-time.Hour + time.Duration(i)*time.Millisecond)})
	}
}

// TestStoreFailureMidDeliveryStartsNoHandlerCallUntilTheStoreAnswers: the
// store fails (its master killed) during the third reward. That call's
// record fails and is given up; no other reward starts while the store
// fails (each would be rewarded again by whoever loads the store next), and
// once it answers the rest are delivered by the same Run, each once.
func TestStoreFailureMidDeliveryStartsNoHandlerCallUntilTheStoreAnswers(t *testing.T) {
	t.Parallel()
	const votes = 20
	srv := newServer(t)
	addOldVotes(srv, votes)
	store := &outageStore{MemoryStore: voterewards.NewMemory()}
	var mu sync.Mutex
	calls := map[string]int{}
	var gaveUp atomic.Int64
	startPoller(t, newClient(t, srv), voterewards.Config{
		Store: store, Concurrency: 1, MaxAttempts: 2,
		OnReward: func(_ context.Context, v voterewards.Vote) error {
			mu.Lock()
			defer mu.Unlock()
			calls[v.Key()]++
			if len(calls) == 3 {
				store.down.Store(true)
			}
			return nil
		},
		OnGiveUp: func(voterewards.Vote, error) { gaveUp.Add(1) },
	})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(calls)
	}
	require.Eventually(t, func() bool { return gaveUp.Load() == 1 }, 5*time.Second, time.Millisecond, "the third reward's record was not given up")
	n := len(votesRequests(srv))
	require.Eventually(t, func() bool { return len(votesRequests(srv)) >= n+3 }, 5*time.Second, time.Millisecond, "polling stopped")
	assert.Equal(t, 3, count(), "a reward started after the store failed")

	store.down.Store(false)
	require.Eventually(t, func() bool { return count() == votes }, 10*time.Second, time.Millisecond,
		"the votes held during the outage were not delivered once the store answered")
	mu.Lock()
	defer mu.Unlock()
	for k, n := range calls {
		assert.Equal(t, 1, n, "vote %s rewarded %d times", k, n)
	}
	assert.EqualValues(t, 1, gaveUp.Load(), "a vote held for the store was given up")
}

// TestHandlerStoreFailureIsNoAttemptAndIsDeliveredAfterTheOutage: a
// transactional handler fails because its database restarts (an error
// wrapping ErrStoreFailed), for longer than MaxAttempts retries last. Those
// failures are not the handler's: no vote is given up, and every vote is
// delivered by the same Run once the store answers, not parked until the
// next Run.
func TestHandlerStoreFailureIsNoAttemptAndIsDeliveredAfterTheOutage(t *testing.T) {
	t.Parallel()
	const votes = 8
	srv := newServer(t)
	addOldVotes(srv, votes)
	var down atomic.Bool
	down.Store(true)
	var failed atomic.Int64
	rec := newRecorder()
	var gaveUp atomic.Int64
	startPoller(t, newClient(t, srv), voterewards.Config{
		Store: voterewards.NewMemoryStore(), Concurrency: 4, MaxAttempts: 2,
		OnReward: func(ctx context.Context, v voterewards.Vote) error {
			if down.Load() {
				failed.Add(1)
				return fmt.Errorf("%w: connection refused", voterewards.ErrStoreFailed)
			}
			return rec.handle(ctx, v)
		},
		OnGiveUp: func(voterewards.Vote, error) { gaveUp.Add(1) },
	})
	require.Eventually(t, func() bool { return failed.Load() >= 3 }, 10*time.Second, time.Millisecond,
		"the handler's store failures were not retried past MaxAttempts")
	down.Store(false)
	require.Eventually(t, func() bool { return rec.count() == votes }, 10*time.Second, time.Millisecond,
		"a vote whose handler met the store's outage was not delivered again in this Run")
	assert.Zero(t, gaveUp.Load(), "a store failure was counted as the handler's")
	for k, n := range rec.snapshot() {
		assert.Equal(t, 1, n, "vote %s rewarded %d times", k, n)
	}
}

var errStoreDown = errors.New("disk full")

// flakyStore fails the first failDelivered calls of Delivered (all of them
// if it is negative).
type flakyStore struct {
	*voterewards.MemoryStore
	failDelivered int64
	delivered     atomic.Int64
}

func (s *flakyStore) Delivered(ctx context.Context, v voterewards.Vote, expire bool) error {
	if n := s.delivered.Add(1); s.failDelivered < 0 || n <= s.failDelivered {
		return errStoreDown
	}
	return s.MemoryStore.Delivered(ctx, v, expire)
}

// counter counts handler calls.
type counter struct{ n atomic.Int64 }

func (c *counter) handle(context.Context, voterewards.Vote) error { c.n.Add(1); return nil }

// soonExpiring adds a vote to srv that expires after d.
func soonExpiring(srv *topggtest.Server, d time.Duration) topggtest.Vote {
	v := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-voterewards.VoteLifetime + d)}
	srv.AddVote(v)
	return srv.Votes()[0]
}

func TestFailedDeliveryRecordIsRetried(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	v := soonExpiring(srv, 300*time.Millisecond)
	store := &flakyStore{MemoryStore: voterewards.NewMemory(), failDelivered: 2}
	var rewards, expiries counter
	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: rewards.handle, OnExpire: expiries.handle, Store: store})

	require.Eventually(t, func() bool { return expiries.n.Load() == 1 }, 5*time.Second, 5*time.Millisecond)
	// The expiry is recorded after its handler returned: wait for the record.
	require.Eventually(t, func() bool {
		snap, err := store.Load(context.Background())
		return err == nil && len(snap.Expiries) == 0
	}, 5*time.Second, time.Millisecond, "the expiry is recorded")
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	assert.Empty(t, snap.Pending, "the delivery is recorded once the store works again")
	assert.EqualValues(t, 1, rewards.n.Load())
	assert.EqualValues(t, 3, store.delivered.Load())
	assert.False(t, time.Now().Before(v.ExpiresAt))
}

func TestDeliveryRecordThatKeepsFailingIsReportedAndNotExpired(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	v := soonExpiring(srv, 200*time.Millisecond)
	store := &flakyStore{MemoryStore: voterewards.NewMemory(), failDelivered: -1}
	var rewards, expiries counter
	var mu sync.Mutex
	var reported []error
	_, stop := runPoller(t, newClient(t, srv), voterewards.Config{
		OnReward: rewards.handle, OnExpire: expiries.handle, Store: store, MaxAttempts: 3,
		OnGiveUp: func(_ voterewards.Vote, err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, err)
		},
	})
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reported) > 0
	}, 5*time.Second, 5*time.Millisecond)
	// Until past the vote's expiry: an expiry scheduled for an unrecorded
	// delivery would fire in this window.
	assert.Never(t, func() bool { return expiries.n.Load() > 0 },
		time.Until(v.ExpiresAt)+100*time.Millisecond, 10*time.Millisecond, "no expiry for an unrecorded delivery")
	require.NoError(t, stop())

	assert.EqualValues(t, 1, rewards.n.Load())
	assert.Zero(t, expiries.n.Load(), "no expiry for a delivery that was not recorded")
	assert.EqualValues(t, 3, store.delivered.Load(), "MaxAttempts writes")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reported, 1)
	assert.ErrorIs(t, reported[0], errStoreDown)
	var rerr *voterewards.DeliveryError
	require.ErrorAs(t, reported[0], &rerr)
	assert.True(t, rerr.Recording)
	assert.False(t, rerr.Expiry)
	assert.Contains(t, rerr.Error(), keyOf(v))
	assert.Contains(t, rerr.Error(), "failed 3 time(s)")

	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	require.Len(t, snap.Pending, 1, "the vote stays pending for the next run")
	assert.Empty(t, snap.Expiries)
}

func TestCloseStopsRecordRetries(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-time.Hour)})
	store := &flakyStore{MemoryStore: voterewards.NewMemory(), failDelivered: -1}
	var rewards counter
	reported := make(chan error, 2)
	_, stop := runPoller(t, newClient(t, srv), voterewards.Config{
		OnReward: rewards.handle, Store: store, RetryDelay: time.Hour,
		OnGiveUp: func(_ voterewards.Vote, err error) { reported <- err },
	})
	// The first write failed; the retry waits up to an hour, unless closed.
	require.Eventually(t, func() bool { return store.delivered.Load() == 1 }, 5*time.Second, time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- stop() }()
	select {
	case err := <-closed:
		require.NoError(t, err, "the retry stops at once, no handler is cancelled")
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for the store retry")
	}
	var rerr *voterewards.DeliveryError
	require.ErrorAs(t, <-reported, &rerr)
	assert.True(t, rerr.Recording)
	assert.Contains(t, rerr.Error(), "failed 1 time(s)")
	assert.EqualValues(t, 1, store.delivered.Load())
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	assert.Len(t, snap.Pending, 1)
}

// events records what an Observer is told; safe for concurrent use.
type events struct{ testkit.Log[voterewards.Event] }

func (e *events) of(typ voterewards.EventType) []voterewards.Event {
	var out []voterewards.Event
	for _, ev := range e.All() {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// lastPending returns the last pending count reported, -1 if none.
func (e *events) lastPending() int {
	p := e.of(voterewards.EventPending)
	if len(p) == 0 {
		return -1
	}
	return p[len(p)-1].Pending
}

// TestObserverEvents: the observer hears every step of the pipeline, with
// counts per origin, the latency of each reward, the retries, the give-ups
// and the pending count, which drops to what stays pending and to 0 when
// Run returns.
func TestObserverEvents(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	created := time.Now().Add(-time.Minute).Truncate(time.Second).UTC()
	for i := range 3 {
		srv.AddVote(topggtest.Vote{UserID: userID(i), PlatformID: platformID(i), CreatedAt: created})
	}
	var mu sync.Mutex
	calls := map[string]int{}
	handler := func(_ context.Context, v voterewards.Vote) error {
		mu.Lock()
		defer mu.Unlock()
		calls[v.PlatformID]++
		switch {
		case v.PlatformID == platformID(1) && calls[v.PlatformID] == 1:
			return errors.New("fails once")
		case v.PlatformID == platformID(2):
			return errors.New("fails always")
		}
		return nil
	}
	var ev events
	p, stop := runPoller(t, newClient(t, srv), voterewards.Config{OnReward: handler, Store: voterewards.NewMemoryStore(),
		MaxAttempts: 2, Observer: ev.Add})
	require.Eventually(t, func() bool {
		return len(ev.of(voterewards.EventDelivered)) == 2 && len(ev.of(voterewards.EventGivenUp)) == 1
	}, 5*time.Second, time.Millisecond)

	// The webhook's record of a vote the poll stored is a duplicate.
	dup := voterewards.Vote{Vote: topgg.Vote{UserID: userID(0), PlatformID: platformID(0), CreatedAt: created}, Origin: voterewards.OriginWebhook}
	require.NoError(t, p.Ingest(context.Background(), dup))

	ingested := ev.of(voterewards.EventIngested)
	require.NotEmpty(t, ingested)
	assert.Equal(t, voterewards.Event{Type: voterewards.EventIngested, Origin: voterewards.OriginHistory, Added: 3}, ingested[0])
	assert.Equal(t, voterewards.Event{Type: voterewards.EventIngested, Origin: voterewards.OriginWebhook, Duplicates: 1}, ingested[len(ingested)-1])
	for _, d := range ev.of(voterewards.EventDelivered) {
		assert.False(t, d.Expiry)
		assert.Equal(t, voterewards.OriginHistory, d.Origin)
		assert.GreaterOrEqual(t, d.Latency, time.Minute, "from created_at, a minute ago")
		assert.Less(t, d.Latency, time.Hour)
	}
	retried := ev.of(voterewards.EventRetried)
	require.Len(t, retried, 2, "one retry each: MaxAttempts 2")
	for _, r := range retried {
		assert.False(t, r.Expiry)
	}
	assert.Equal(t, voterewards.OriginHistory, ev.of(voterewards.EventGivenUp)[0].Origin)
	assert.Equal(t, 1, ev.lastPending(), "the vote given up stays pending")

	// Redelivered, and given up again: still one pending, not two.
	require.NoError(t, p.Redeliver(context.Background()))
	require.Eventually(t, func() bool { return len(ev.of(voterewards.EventGivenUp)) == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 1, ev.lastPending())

	require.NoError(t, stop())
	assert.Equal(t, 0, ev.lastPending(), "Run holds nothing once it returned")
}

// TestObserverPanicContained: an observer that panics is logged; the votes
// are rewarded all the same.
func TestObserverPanicContained(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddVote(topggtest.Vote{UserID: userID(0), PlatformID: platformID(0)})
	rec := newRecorder()
	var buf testlog.Buffer
	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(),
		Observer: func(voterewards.Event) { panic("observer bug") }, Logger: buf.Logger()})
	require.Eventually(t, func() bool { return rec.count() == 1 }, 5*time.Second, time.Millisecond)
	assert.Contains(t, buf.String(), "Observer panicked")
	// Observers run on several goroutines: the one that logs the stack may
	// log after another one's panic without it.
	require.Eventually(t, func() bool { return strings.Count(buf.String(), "[running]") > 0 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 1, strings.Count(buf.String(), "[running]"), "the stack, once")
}

// expiryLog records OnExpire calls and checks that none comes early.
type expiryLog struct {
	t     *testing.T
	clk   clock.Clock // the poller's clock; nil: the real one
	mu    sync.Mutex
	calls map[string]int
}

func (e *expiryLog) handle(_ context.Context, v voterewards.Vote) error {
	assert.False(e.t, clock.Or(e.clk).Now().Before(v.ExpiresAt), "expiry of %s before %s", v.Key(), v.ExpiresAt)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls[v.Key()]++
	return nil
}

func (e *expiryLog) snapshot() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for k, v := range e.calls {
		out[k] = v
	}
	return out
}

func TestExpiryFiresOncePerVoteAcrossRestart(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	t0 := time.Now()
	var soon, later, active []topggtest.Vote
	for i := range 3 {
		soon = append(soon, topggtest.Vote{UserID: userID(i), PlatformID: platformID(i), CreatedAt: t0.Add(-12*time.Hour + time.Second)})
		later = append(later, topggtest.Vote{UserID: userID(10 + i), PlatformID: platformID(10 + i), CreatedAt: t0.Add(-12*time.Hour + 3500*time.Millisecond)})
		active = append(active, topggtest.Vote{UserID: userID(20 + i), PlatformID: platformID(20 + i), CreatedAt: t0.Add(-time.Hour)})
	}
	srv.AddVote(soon...)
	srv.AddVote(later...)
	srv.AddVote(active...)
	dir := t.TempDir()

	// Run 1: every vote rewarded, the first group expires.
	// The expiries are timed on a fake clock: the test advances it.
	clk := clock.NewFake(t0)
	store, err := boltstate.Open(dir)
	require.NoError(t, err)
	rec1, exp1 := newRecorder(), &expiryLog{t: t, clk: clk, calls: map[string]int{}}
	cfg := voterewards.WithClock(voterewards.Config{OnReward: rec1.handle, OnExpire: exp1.handle, Store: store, Lookback: 13 * time.Hour}, clk)
	_, stop1 := runPoller(t, newClient(t, srv), cfg)
	require.Eventually(t, func() bool { return rec1.count() == 9 }, 5*time.Second, time.Millisecond)
	assert.Empty(t, exp1.snapshot(), "nothing expired yet")
	clk.Advance(time.Second)
	require.Eventually(t, func() bool { return len(exp1.snapshot()) == 3 }, 5*time.Second, time.Millisecond)
	require.NoError(t, stop1())
	require.NoError(t, store.Close())
	got1 := exp1.snapshot()
	for _, v := range soon {
		assert.Equal(t, 1, got1[keyOf(v)])
	}

	// Down while the second group expires.
	clk.Set(t0.Add(3600 * time.Millisecond))

	// Run 2: the late expiries fire at start; nothing else is repeated.
	store, err = boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	rec2, exp2 := newRecorder(), &expiryLog{t: t, clk: clk, calls: map[string]int{}}
	cfg = voterewards.WithClock(voterewards.Config{OnReward: rec2.handle, OnExpire: exp2.handle, Store: store, Lookback: 13 * time.Hour}, clk)
	p2, stop2 := runPoller(t, newClient(t, srv), cfg)
	require.Eventually(t, func() bool { return len(exp2.snapshot()) == 3 && p2.Active(userID(20)).Covered }, 5*time.Second, time.Millisecond)
	require.NoError(t, stop2())
	got2 := exp2.snapshot()
	for _, v := range later {
		assert.Equal(t, 1, got2[keyOf(v)], "late expiry fires once at start")
		assert.Zero(t, got1[keyOf(v)], "not before its time")
	}
	for _, v := range soon {
		assert.Zero(t, got2[keyOf(v)], "an expiry already handled does not fire again")
	}
	for _, v := range active {
		assert.Zero(t, got1[keyOf(v)]+got2[keyOf(v)])
	}
	assert.Zero(t, rec2.total(), "no reward repeated after the restart")
}

func TestExpiryOfLateDeliveredVoteRunsBeforeTheUsersNextVote(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	// The first vote expired long ago; the user voted again since. Read
	// together, the first vote's expiry must come before the second reward.
	first, second := lateAndNextVote(srv)
	var log eventLog
	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: log.handler("reward"), OnExpire: log.handler("expire"), Store: voterewards.NewMemoryStore(), Lookback: 24 * time.Hour})
	requireExpiryBeforeNextReward(t, &log, first, second, 5*time.Second)
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
			if e.Type == voterewards.EventGivenUp && e.Expiry {
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
	assert.Contains(t, out, "[running]", "with its stack")
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	var keys []string
	for _, v := range snap.Expiries {
		keys = append(keys, v.Key())
	}
	assert.Contains(t, keys, keyOf(expired), "the expiry stays pending for the next Run")
}

// TestGivenUpRewardIsRedeliveredAndGetsNoExpiry: a reward whose handler
// failed every attempt stays pending, is delivered by Redeliver (and by the
// next Run), and no expiry is scheduled before it was delivered.
func TestGivenUpRewardIsRedeliveredAndGetsNoExpiry(t *testing.T) {
	t.Parallel()
	srv, _ := serverWithVote(t)
	clk := clock.NewFake(time.Now())
	var failing atomic.Bool
	failing.Store(true)
	var mu sync.Mutex
	var rewards, expiries, givenUp int
	store := voterewards.NewMemoryStore()
	cfg := voterewards.WithClock(voterewards.Config{
		Store: store, MaxAttempts: 2, RetryDelay: time.Second,
		OnReward: func(context.Context, voterewards.Vote) error {
			mu.Lock()
			defer mu.Unlock()
			rewards++
			if failing.Load() {
				return errHandler
			}
			return nil
		},
		OnExpire: func(context.Context, voterewards.Vote) error { mu.Lock(); expiries++; mu.Unlock(); return nil },
		OnGiveUp: func(voterewards.Vote, error) { mu.Lock(); givenUp++; mu.Unlock() },
	}, clk)
	p, stop := runPoller(t, newClient(t, srv), cfg)
	count := func() (int, int, int) { mu.Lock(); defer mu.Unlock(); return rewards, expiries, givenUp }
	require.Eventually(t, func() bool { r, _, _ := count(); return r == 1 }, 5*time.Second, time.Millisecond)
	// The retry waits RetryDelay on the fake clock.
	require.Eventually(t, func() bool { clk.Advance(time.Second); _, _, g := count(); return g == 1 }, 5*time.Second, time.Millisecond)
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	require.Len(t, snap.Pending, 1, "not recorded as done")
	assert.Empty(t, snap.Expiries, "no expiry for an undelivered reward")

	// Past the vote's expiry: nothing expires, the vote was never delivered.
	clk.Advance(13 * time.Hour)
	assert.Never(t, func() bool { _, e, _ := count(); return e > 0 }, 50*time.Millisecond, 5*time.Millisecond)

	failing.Store(false)
	require.NoError(t, p.Redeliver(context.Background()))
	require.Eventually(t, func() bool { r, _, _ := count(); return r == 3 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool {
		snap, err := store.Load(context.Background())
		return err == nil && len(snap.Pending) == 0
	}, 5*time.Second, time.Millisecond)
	// Delivered late, after its expiry: the expiry follows at once.
	require.Eventually(t, func() bool { _, e, _ := count(); return e == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, stop())
	assert.ErrorIs(t, p.Redeliver(context.Background()), voterewards.ErrNotRunning)
}

// TestVoteStoredByAProcessWhoseClockIsAheadIsRewardedOnce: a webhook vote
// stored by one process is delivered by a leader whose clock is ten minutes
// behind. The leader must record the vote it was given, not one moved to its
// own clock (whose key the store does not hold): else it stays pending and
// every later Run rewards it again.
func TestVoteStoredByAProcessWhoseClockIsAheadIsRewardedOnce(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	store := voterewards.NewMemoryStore()
	rec := newRecorder()
	ahead, err := voterewards.New(newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: store})
	require.NoError(t, err)
	w := webhookVote(1, time.Now())
	require.NoError(t, ahead.Ingest(context.Background(), w))

	clk := clock.NewFake(time.Now().Add(-10 * time.Minute))
	cfg := voterewards.WithClock(voterewards.Config{OnReward: rec.handle, Store: store}, clk)
	for run := 1; run <= 2; run++ {
		_, stop := runPoller(t, newClient(t, srv), cfg)
		require.Eventually(t, func() bool { return rec.count() == 1 }, 5*time.Second, time.Millisecond)
		require.Eventually(t, func() bool {
			snap, err := store.Load(context.Background())
			return err == nil && len(snap.Pending) == 0
		}, 5*time.Second, time.Millisecond, "run %d: the delivery was not recorded", run)
		require.NoError(t, stop())
	}
	assert.Equal(t, map[string]int{w.Key(): 1}, rec.snapshot())
}

// lostRecordStore is a memory store whose first lose Delivered calls commit,
// then fail: the answer lost, as on a timeout after commit.
type lostRecordStore struct {
	*voterewards.MemoryStore
	lose atomic.Int64
}

func (s *lostRecordStore) Delivered(ctx context.Context, v voterewards.Vote, expire bool) error {
	if err := s.MemoryStore.Delivered(ctx, v, expire); err != nil || s.lose.Add(-1) < 0 {
		return err
	}
	return errStoreDown
}

// TestExpiryOfARecordWhoseAnswerWasLostFiresInThisRun: every record of a
// reward commits but answers an error, so the reward is given up; the store
// holds its expiry all the same. The running Run fires that expiry once when
// it is due, not at the next Run, and rewards nothing twice.
func TestExpiryOfARecordWhoseAnswerWasLostFiresInThisRun(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	soonExpiring(srv, 300*time.Millisecond)
	store := &lostRecordStore{MemoryStore: voterewards.NewMemory()}
	store.lose.Store(2)
	var rewards, expiries, gaveUp counter
	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: rewards.handle, OnExpire: expiries.handle, Store: store, MaxAttempts: 2,
		OnGiveUp: func(voterewards.Vote, error) { gaveUp.n.Add(1) }})
	require.Eventually(t, func() bool { return gaveUp.n.Load() == 1 }, 5*time.Second, time.Millisecond, "the record was not given up")
	require.Eventually(t, func() bool { return expiries.n.Load() == 1 }, 5*time.Second, time.Millisecond,
		"the expiry the store kept did not fire in this Run")
	assert.EqualValues(t, 1, rewards.n.Load())
}
