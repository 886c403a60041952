package voterewards_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

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
