package voterewards_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// The store's feed echoes every vote this process ingests, so a vote reaches
// the run twice: by the path that ingested it and by the echo. These tests
// make the echo arrive at the worst moments.

// echoFirstStore is a MemoryStore whose first Ingest with new votes returns
// only once the run has taken the echo of those votes (claimed is closed by
// the test), so that the echo is handled before the poll's own queueing.
type echoFirstStore struct {
	*voterewards.MemoryStore
	once    sync.Once
	claimed chan struct{}
}

func (s *echoFirstStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	added, err := s.MemoryStore.Ingest(ctx, cp, votes, grace)
	if err == nil && len(added) > 0 {
		s.once.Do(func() {
			select {
			case <-s.claimed:
			case <-time.After(5 * time.Second):
			}
		})
	}
	return added, err
}

// TestEchoTakenFirstKeepsTheUsersOrder: the feed's echo of a page is taken
// first, and the run's intake is held up right after it took the user's
// first vote (by the observer of the pending count); meanwhile the poll goes
// on with the user's second vote. The first vote's reward, then its (late)
// expiry, still come before the second reward. Before claiming and queueing
// were one step, the poll queued and started the second vote while the
// intake held the first unqueued.
func TestEchoTakenFirstKeepsTheUsersOrder(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	first := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(-20 * time.Hour)}
	second := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(-time.Hour)}
	srv.AddVote(first, second)
	store := &echoFirstStore{MemoryStore: voterewards.NewMemory(), claimed: make(chan struct{})}

	secondStarted := make(chan struct{})
	log := eventLog{after: func(kind string, v voterewards.Vote) {
		if kind == "reward" && v.Key() == keyOf(second) {
			close(secondStarted)
		}
	}}
	// The first claim is the intake's (the store's Ingest waits for it). It
	// is held up until the second reward starts, which a correct run cannot
	// do before the first vote is queued: there, the hold ends after a
	// second (the poll's own report of its claim waits behind it).
	var claims atomic.Int32
	observer := func(e voterewards.Event) {
		if e.Type != voterewards.EventPending || claims.Add(1) != 1 {
			return
		}
		close(store.claimed)
		select {
		case <-secondStarted:
		case <-time.After(time.Second):
		}
	}
	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: log.handler("reward"), OnExpire: log.handler("expire"),
		Observer: observer, Store: store, Lookback: 24 * time.Hour})
	require.Eventually(t, func() bool { return len(log.snapshot()) == 3 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, []string{"reward " + keyOf(first), "expire " + keyOf(first), "reward " + keyOf(second)}, log.snapshot())
}

// lateEchoStore is a MemoryStore whose feed holds back the echoes of votes
// until release is closed; the first vote added after that brings the held
// echoes, then a resync (as after a reconnect), then itself.
type lateEchoStore struct {
	*voterewards.MemoryStore
	release chan struct{}
}

func (s *lateEchoStore) Follow(ctx context.Context, added func(voterewards.Vote), resync func()) error {
	var held []voterewards.Vote
	released := false
	// The inner feed calls these from one goroutine: no lock needed.
	return s.MemoryStore.Follow(ctx, func(v voterewards.Vote) {
		if !released {
			select {
			case <-s.release:
			default:
				held = append(held, v)
				return
			}
			released = true
			for _, h := range held {
				added(h)
			}
			held = nil
			resync()
		}
		added(v)
	}, resync)
}

// TestLateEchoDoesNotRetryAGivenUpReward: a reward whose handler failed every
// attempt waits for Redeliver (or the next Run); neither the feed's late
// echo of the vote nor a feed resync's reload retries it.
func TestLateEchoDoesNotRetryAGivenUpReward(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	v := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-time.Hour)}
	srv.AddVote(v)
	clk := clock.NewFake(time.Now())
	var failing atomic.Bool
	failing.Store(true)
	var mu sync.Mutex
	attempts := map[string]int{}
	givenUp := 0
	inner := voterewards.NewMemory()
	store := &lateEchoStore{MemoryStore: inner, release: make(chan struct{})}
	cfg := voterewards.WithClock(voterewards.Config{
		Store: store, MaxAttempts: 2, RetryDelay: time.Second,
		OnReward: func(_ context.Context, got voterewards.Vote) error {
			mu.Lock()
			defer mu.Unlock()
			attempts[got.Key()]++
			if got.Key() == keyOf(v) && failing.Load() {
				return errHandler
			}
			return nil
		},
		OnGiveUp: func(voterewards.Vote, error) { mu.Lock(); givenUp++; mu.Unlock() },
	}, clk)
	p, stop := runPoller(t, newClient(t, srv), cfg)
	tries := func(k string) int { mu.Lock(); defer mu.Unlock(); return attempts[k] }
	require.Eventually(t, func() bool { return tries(keyOf(v)) == 1 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { clk.Advance(time.Second); mu.Lock(); defer mu.Unlock(); return givenUp == 1 }, 5*time.Second, time.Millisecond)

	// Now the echo of the vote arrives, with a resync (whose reload sees the
	// vote pending), then the user's next vote comes by webhook. The next
	// vote goes to the user's lane behind anything queued for v, so once it
	// is rewarded, a retry of v would have been made.
	clk.Advance(13 * time.Hour)
	close(store.release)
	// A vote ingested by another process sharing the store (sanitized, as a
	// Store gets them) reaches the run by the feed, after v's echo and the
	// resync.
	at := clk.Now().UTC().Round(0)
	next := voterewards.Vote{Vote: topgg.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: at, ExpiresAt: at.Add(voterewards.VoteLifetime)},
		Origin: voterewards.OriginWebhook}
	nextKey := next.Key()
	_, err := inner.Ingest(context.Background(), nil, []voterewards.Vote{next}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.Eventually(t, func() bool { clk.Advance(time.Second); return tries(nextKey) == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 2, tries(keyOf(v)), "a given-up reward is not retried by an echo")

	failing.Store(false)
	require.NoError(t, p.Redeliver(context.Background()))
	require.Eventually(t, func() bool { return tries(keyOf(v)) == 3 }, 5*time.Second, time.Millisecond)
	require.NoError(t, stop())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, givenUp)
}
