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

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// webhookVote is user u's vote as a v1 webhook carries it: an id, 7
// fractional digits (the history shows 6), the query.
func webhookVote(u int, created time.Time) voterewards.Vote {
	c := created.UTC().Truncate(time.Microsecond).Add(700 * time.Nanosecond)
	return voterewards.Vote{
		Vote:   topgg.Vote{UserID: userID(u), PlatformID: platformID(u), Weight: 1, CreatedAt: c, ExpiresAt: c.Add(12 * time.Hour)},
		Origin: voterewards.OriginWebhook, Hook: &voterewards.Hook{ID: "8084992158640087" + string(rune('0'+u%10)), Query: map[string]string{"ref": "abc"}},
	}
}

// v0Vote is user u's vote as a legacy v0 webhook carries it: the platform
// id, no user id, no timestamp.
func v0Vote(u int) voterewards.Vote {
	return voterewards.Vote{Vote: topgg.Vote{PlatformID: platformID(u), Weight: 1}, Origin: voterewards.OriginWebhookV0,
		Hook: &voterewards.Hook{Query: map[string]string{"a": "b"}}}
}

// historyOf is the history's record of w: no id, 6 digits.
func historyOf(w voterewards.Vote) topggtest.Vote {
	return topggtest.Vote{UserID: userID0(w), PlatformID: w.PlatformID, Weight: w.Weight, CreatedAt: w.CreatedAt.Truncate(time.Microsecond)}
}

func userID0(w voterewards.Vote) string {
	if w.UserID != "" {
		return w.UserID
	}
	return "7" + w.PlatformID[1:]
}

// TestIngestIsDurableAndWorksWithoutRun: Ingest returns once the vote is in
// the file; Active knows it at once; the next Run delivers it.
func TestIngestIsDurableAndWorksWithoutRun(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	dir := t.TempDir()
	store, err := boltstate.Open(dir)
	require.NoError(t, err)
	rec := newRecorder()
	p, err := voterewards.New(newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: store})
	require.NoError(t, err)
	w := webhookVote(1, time.Now().Add(-time.Second))
	require.NoError(t, p.Ingest(context.Background(), w))
	st := p.Active(w.PlatformID)
	assert.True(t, st.Active, "Active learns a webhook vote at once")
	assert.True(t, p.Active(w.UserID).Active)

	// Durable: a process that died right after the 2xx still has it.
	require.NoError(t, store.Close())
	store, err = boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	require.Len(t, snap.Pending, 1)

	p2 := startPoller(t, newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: store})
	require.Eventually(t, func() bool { return rec.count() == 1 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return p2.Active(userID(9)).Covered }, 5*time.Second, time.Millisecond)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, v := range rec.votes {
		assert.Equal(t, voterewards.OriginWebhook, v.Origin)
		assert.Equal(t, w.Hook, v.Hook, "the handler gets the webhook id and query")
	}
}

// TestIngestWakesRunningDelivery: with Run running, an ingested vote is
// delivered at once, not at the next poll (the poll interval is an hour on
// a clock that does not move).
func TestIngestWakesRunningDelivery(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	clk := clock.NewFake(time.Now())
	rec := newRecorder()
	p := startPoller(t, newClient(t, srv), voterewards.WithClock(voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(), Interval: time.Hour}, clk))
	require.Eventually(t, func() bool { return p.Active("x").Covered || clk.Timers() > 0 }, 5*time.Second, time.Millisecond)
	n := len(votesRequests(srv))
	for u := range 20 {
		require.NoError(t, p.Ingest(context.Background(), webhookVote(u, time.Now())))
	}
	require.Eventually(t, func() bool { return rec.count() == 20 }, 5*time.Second, time.Millisecond)
	assert.Len(t, votesRequests(srv), n, "delivered without a poll")
}

// TestOneVoteAcrossSources: the merge cases of issue 9, each rewarded once.
func TestOneVoteAcrossSources(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		hooks    func(now time.Time) []voterewards.Vote // ingested before the poll
		history  func(now time.Time) []topggtest.Vote
		after    func(now time.Time) []voterewards.Vote // ingested after the poll read the history
		origin   voterewards.Origin
		hasQuery bool
	}{
		"webhook then poll": {
			hooks:   func(now time.Time) []voterewards.Vote { return []voterewards.Vote{webhookVote(1, now)} },
			history: func(now time.Time) []topggtest.Vote { return []topggtest.Vote{historyOf(webhookVote(1, now))} },
			origin:  voterewards.OriginWebhook, hasQuery: true,
		},
		"poll then webhook": {
			history: func(now time.Time) []topggtest.Vote { return []topggtest.Vote{historyOf(webhookVote(1, now))} },
			after:   func(now time.Time) []voterewards.Vote { return []voterewards.Vote{webhookVote(1, now)} },
			origin:  voterewards.OriginHistory,
		},
		"v0 webhook then poll": {
			hooks: func(time.Time) []voterewards.Vote { return []voterewards.Vote{v0Vote(1)} },
			// The history's created_at is the vote's; the v0 record is the
			// receipt time, seconds later.
			history: func(now time.Time) []topggtest.Vote {
				return []topggtest.Vote{historyOf(webhookVote(1, now.Add(-3*time.Second)))}
			},
			origin: voterewards.OriginWebhookV0, hasQuery: true,
		},
		"replayed delivery": {
			hooks: func(now time.Time) []voterewards.Vote {
				return []voterewards.Vote{webhookVote(1, now), webhookVote(1, now)}
			},
			after:  func(now time.Time) []voterewards.Vote { return []voterewards.Vote{webhookVote(1, now)} },
			origin: voterewards.OriginWebhook, hasQuery: true,
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			now := time.Now().Add(-time.Minute)
			rec := newRecorder()
			p, err := voterewards.New(newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(),
				Interval: 10 * time.Millisecond})
			require.NoError(t, err)
			if c.hooks != nil {
				for _, v := range c.hooks(now) {
					require.NoError(t, p.Ingest(context.Background(), v))
				}
			}
			if c.history != nil {
				srv.AddVote(c.history(now)...)
			}
			stop := goRun(t, p.Run)
			t.Cleanup(func() { _ = stop() })
			require.Eventually(t, func() bool { return rec.count() == 1 && p.Active(userID(9)).Covered }, 5*time.Second, time.Millisecond)
			if c.after != nil {
				for _, v := range c.after(now) {
					require.NoError(t, p.Ingest(context.Background(), v))
				}
			}
			// Three more polls: a duplicate would be delivered by then.
			n := len(votesRequests(srv))
			require.Eventually(t, func() bool { return len(votesRequests(srv)) >= n+3 }, 5*time.Second, time.Millisecond)
			require.NoError(t, stop())
			assert.Equal(t, 1, rec.total(), "one reward")
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for _, v := range rec.votes {
				assert.Equal(t, c.origin, v.Origin, "the first source delivers")
				assert.Equal(t, c.hasQuery, v.Hook != nil && v.Hook.Query != nil)
				assert.Equal(t, platformID(1), v.PlatformID)
			}
		})
	}
}

// TestWebhookLostThenRecoveredByThePoll: a vote whose webhook never arrived
// is rewarded from the history.
func TestWebhookLostThenRecoveredByThePoll(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	rec := newRecorder()
	p := startPoller(t, newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore()})
	require.NoError(t, p.Ingest(context.Background(), webhookVote(1, time.Now())))
	srv.AddVote(historyOf(webhookVote(1, time.Now().Add(-time.Second))))
	lost := historyOf(webhookVote(2, time.Now()))
	srv.AddVote(lost)
	require.Eventually(t, func() bool { return rec.count() == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 1, rec.snapshot()[keyOf(lost)])
}

func TestIngestRefusesWhatCannotBeAVote(t *testing.T) {
	t.Parallel()
	store := voterewards.NewMemoryStore()
	p, err := voterewards.New(noCursor{}, voterewards.Config{OnReward: newRecorder().handle, Store: store})
	require.NoError(t, err)
	ok := webhookVote(1, time.Now())
	noID := ok
	noID.UserID, noID.PlatformID = "", ""
	noOrigin := ok
	noOrigin.Origin = 0
	for name, v := range map[string]voterewards.Vote{"no id": noID, "no origin": noOrigin} {
		assert.ErrorIs(t, p.Ingest(context.Background(), ok, v), voterewards.ErrInvalidVote, name)
	}
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	assert.Empty(t, snap.Seen, "nothing stored from a call that failed")
	assert.NoError(t, p.Ingest(context.Background()), "no votes: nothing to do")
}

// TestConcurrentIngestOfOneVoteRewardsOnce: the same delivery arriving many
// times at once (Top.gg retries, several receivers) is one reward.
func TestConcurrentIngestOfOneVoteRewardsOnce(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	rec := newRecorder()
	store, err := boltstate.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	p := startPoller(t, newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: store})
	now := time.Now()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			v := webhookVote(1, now)
			if i%3 == 1 {
				v = v0Vote(1)
			}
			assert.NoError(t, p.Ingest(context.Background(), v))
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool { return rec.count() == 1 }, 5*time.Second, time.Millisecond)
	assert.Never(t, func() bool { return rec.total() > 1 }, 100*time.Millisecond, 5*time.Millisecond)
}

// TestTwoProcessesShareAStore plays a fleet on one MemoryStore (a Feed): the
// leader runs delivery, the follower only ingests webhooks and mirrors.
// Votes the follower ingests are delivered by the leader at once (without a
// poll: the leader's clock does not move), and the follower's Active learns
// the votes the leader polls.
func TestTwoProcessesShareAStore(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	shared := voterewards.NewMemoryStore()
	rec := newRecorder()
	leaderClock := clock.NewFake(time.Now())
	leader := startPoller(t, newClient(t, srv), voterewards.WithClock(voterewards.Config{OnReward: rec.handle, Store: shared, Interval: time.Hour}, leaderClock))
	followerClock := clock.NewFake(time.Now())
	follower, err := voterewards.New(newClient(t, srv), voterewards.WithClock(voterewards.Config{OnReward: rec.handle, Store: shared}, followerClock))
	require.NoError(t, err)
	stopMirror := goRun(t, follower.Mirror)
	t.Cleanup(func() { _ = stopMirror() })
	require.Eventually(t, func() bool { return leader.Active("x").Covered }, 5*time.Second, time.Millisecond)

	polls := len(votesRequests(srv))
	w := webhookVote(1, time.Now())
	require.NoError(t, follower.Ingest(context.Background(), w))
	require.Eventually(t, func() bool { return rec.count() == 1 }, 5*time.Second, time.Millisecond)
	assert.Len(t, votesRequests(srv), polls, "the leader delivers another process's vote at once, not at its next poll")
	assert.True(t, leader.Active(w.PlatformID).Active, "and knows it")

	// A vote the leader polls shows in the follower's Active.
	polled := historyOf(webhookVote(2, time.Now().Add(-time.Minute)))
	srv.AddVote(polled)
	leaderClock.Advance(time.Hour)
	require.Eventually(t, func() bool { return follower.Active(polled.PlatformID).Active }, 5*time.Second, time.Millisecond)
	assert.ErrorIs(t, follower.Mirror(context.Background()), topgg.ErrRunning, "one Mirror at a time")
	// Its first load may have come before the leader's first checkpoint: the
	// next prune tick loads the store again until the window is covered.
	// (Advancing inside the wait: a resync may replace the timer meanwhile.)
	require.Eventually(t, func() bool {
		followerClock.Advance(time.Minute)
		return follower.Active(polled.PlatformID).Covered
	}, 5*time.Second, 5*time.Millisecond, "a follower covers the window the leader read")
	// The follower may learn the polled vote (by the feed, during the
	// leader's store write) before the leader delivers it: wait for that.
	require.Eventually(t, func() bool { return rec.count() == 2 }, 5*time.Second, time.Millisecond)
	require.NoError(t, stopMirror())
	assert.Equal(t, 2, rec.total(), "each vote rewarded once, by the leader")
}

// replayPage is a page of the v1 history holding v alone, as the service
// would send it again.
func replayPage(v topggtest.Vote) string {
	return fmt.Sprintf(`{"data":[{"user_id":%q,"platform_id":%q,"weight":%d,"created_at":%q,"expires_at":%q}]}`,
		v.UserID, v.PlatformID, v.Weight, v.CreatedAt.Format(time.RFC3339Nano), v.ExpiresAt.Format(time.RFC3339Nano))
}

// TestHistoryReplayOfAPrunedVoteIsNotRewardedAgain: the poll rewards an
// expired vote (a long lookback) and prunes it from the dedup set; then the
// service sends that vote again (a stale page, a cursor that went back). It is
// recognised whatever the lookback and the prune: not stored, not rewarded,
// not counted a second time. Before, the pruned vote was new again.
func TestHistoryReplayOfAPrunedVoteIsNotRewardedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, store, rec, _, _ := prunedVote(t)

	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 200, Times: 3, Body: replayPage(srv.Votes()[0])}))
	require.Eventually(t, func() bool { return srv.PendingFaults() == 0 }, 5*time.Second, 5*time.Millisecond, "the replays were not read")
	n := len(votesRequests(srv))
	require.Eventually(t, func() bool { return len(votesRequests(srv)) > n }, 5*time.Second, 5*time.Millisecond, "polling stopped")

	st, err := store.Stats(ctx, platformID(1))
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes, "the replayed vote was counted again")
	snap, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Seen, 1, "the replayed vote was stored again")
	assert.Empty(t, snap.Pending)
	assert.Equal(t, 2, rec.total(), "the replayed vote was rewarded again")
}

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
