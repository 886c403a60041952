package voterewards_test

import (
	"context"
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
