package voterewards_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testlog"
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
	srv := newServer(t)
	v := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-time.Hour)}
	srv.AddVote(v)
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
