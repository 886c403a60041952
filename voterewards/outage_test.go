package voterewards_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

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
