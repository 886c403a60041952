package voterewards_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

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
	now := time.Now()
	// The first vote expired long ago; the user voted again since. Read
	// together, the first vote's expiry must come before the second reward.
	first := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(-20 * time.Hour)}
	second := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(-time.Hour)}
	srv.AddVote(first, second)
	var log eventLog
	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: log.handler("reward"), OnExpire: log.handler("expire"), Store: voterewards.NewMemoryStore(), Lookback: 24 * time.Hour})
	require.Eventually(t, func() bool { return len(log.snapshot()) == 3 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, []string{"reward " + keyOf(first), "expire " + keyOf(first), "reward " + keyOf(second)}, log.snapshot())
}
