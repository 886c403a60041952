package voterewards_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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
	"github.com/dblkit/go-topgg/topgg/webhook"
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
	first, second := lateAndNextVote(srv)
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
	requireExpiryBeforeNextReward(t, &log, first, second, 10*time.Second)
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
	srv, v := serverWithVote(t)
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

const hookSecret = webhook.Secret("whs_voterewards_bridge_secret")

// noHistory is a vote history that stays empty: every vote the tests see
// comes by webhook.
type noHistory struct{}

func (noHistory) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	return &topgg.VotePage{}, nil
}

// hookedPoller runs a poller on an empty history and a webhook receiver
// whose OnVote is the poller's IngestWebhook, on a real server; it returns
// the receiver's URL.
func hookedPoller(t *testing.T, cfg voterewards.Config) string {
	t.Helper()
	p := startPoller(t, noHistory{}, cfg)
	rcv, err := webhook.New(webhook.Config{Secrets: []webhook.Secret{hookSecret}, LegacyAuth: "v0-auth", OnVote: p.IngestWebhook})
	require.NoError(t, err)
	hs := httptest.NewServer(rcv)
	t.Cleanup(hs.Close)
	return hs.URL
}

// post sends body to url as a v1 (signed) or v0 delivery and returns the status.
func post(t *testing.T, url string, version int, body string) int {
	t.Helper()
	req, err := webhook.NewRequest(context.Background(), url, hookSecret, time.Now(), []byte(body))
	require.NoError(t, err)
	if version == 0 { // v0: the shared secret in Authorization, no signature
		req.Header.Del(webhook.SignatureHeader)
		req.Header.Set("Authorization", "v0-auth")
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestIngestWebhookIsTheReceiversOnVote: a vote the fake service delivers to
// a receiver whose OnVote is Poller.IngestWebhook is stored, answered 204 and
// rewarded once, with its origin, webhook id and query; a v0 vote has its
// origin; a v0 test delivery is no vote; a vote the pipeline can never take
// is answered 400 (not retried).
func TestIngestWebhookIsTheReceiversOnVote(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	rec := newRecorder()
	url := hookedPoller(t, voterewards.Config{Store: voterewards.NewMemoryStore(), OnReward: rec.handle})
	require.NoError(t, srv.AddWebhook(url, string(hookSecret)))

	now := time.Now().UTC()
	srv.AddVoteQuery("ref=abc", topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), Weight: 2,
		CreatedAt: now, ExpiresAt: now.Add(12 * time.Hour)})
	require.Eventually(t, func() bool { return rec.total() == 1 }, 5*time.Second, 5*time.Millisecond)
	v := rec.nth(0)
	assert.Equal(t, voterewards.OriginWebhook, v.Origin)
	assert.Equal(t, platformID(1), v.PlatformID)
	assert.Equal(t, 2, v.Weight)
	require.NotNil(t, v.Hook)
	assert.Equal(t, topggtest.WebhookVoteID(1), v.Hook.ID)
	assert.Equal(t, map[string]string{"ref": "abc"}, v.Hook.Query)
	d := srv.Deliveries()
	require.Len(t, d, 1)
	require.Eventually(t, func() bool { d = srv.Deliveries(); return d[0].Done }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, http.StatusNoContent, d[0].Attempts[len(d[0].Attempts)-1].Status)

	assert.Equal(t, http.StatusNoContent, post(t, url, 0, `{"bot":"1","user":"`+platformID(2)+`","type":"upvote","isWeekend":false}`))
	require.Eventually(t, func() bool { return rec.total() == 2 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, voterewards.OriginWebhookV0, rec.nth(1).Origin)

	assert.Equal(t, http.StatusNoContent, post(t, url, 0, `{"bot":"1","user":"`+platformID(3)+`","type":"test","isWeekend":false}`))
	long := strings.Repeat("9", 2000) // an id no store keeps
	assert.Equal(t, http.StatusBadRequest, post(t, url, 0, `{"bot":"1","user":"`+long+`","type":"upvote"}`))
	assert.Never(t, func() bool { return rec.total() != 2 }, 100*time.Millisecond, 10*time.Millisecond,
		"the test delivery or the invalid vote was rewarded")
}

// panicStore is a store whose Ingest panics, as a store with a bug would.
type panicStore struct{ *voterewards.MemoryStore }

func (s panicStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	if len(votes) > 0 && votes[0].Origin != voterewards.OriginHistory {
		panic("store bug")
	}
	return s.MemoryStore.Ingest(ctx, cp, votes, grace)
}

// TestIngestWebhookStorePanicIsAnswered500: a panic in the store under
// IngestWebhook reaches the peer as a 500 (Top.gg retries), not as a
// dropped connection.
func TestIngestWebhookStorePanicIsAnswered500(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	url := hookedPoller(t, voterewards.Config{Store: panicStore{voterewards.NewMemory()}, OnReward: rec.handle})
	body := `{"type":"vote.create","data":{"id":"1","weight":1,"created_at":"` + time.Now().UTC().Format(time.RFC3339Nano) +
		`","expires_at":"` + time.Now().UTC().Add(time.Hour).Format(time.RFC3339Nano) + `","user":{"platform_id":"` + platformID(1) + `"}}}`
	assert.Equal(t, http.StatusInternalServerError, post(t, url, 1, body))
	assert.Zero(t, rec.total())
}

// nth returns the n-th vote handled.
func (r *recorder) nth(n int) voterewards.Vote {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.votes[r.order[n]]
}

// TestExpiredWebhookVoteIsNotCountedAgain: the poll rewards an expired vote
// from the history and prunes it from the dedup set (it lies before the
// newest vote less the overlap); a webhook delivery of that vote arriving
// afterwards (a replay, or a fake's late retry) is answered nil and neither
// rewarded nor counted a second time. Without the check in IngestWebhook the
// pruned vote is stored again: two rewards, Votes 2.
func TestExpiredWebhookVoteIsNotCountedAgain(t *testing.T) {
	t.Parallel()
	_, store, rec, p, old := prunedVote(t)

	require.NoError(t, p.IngestWebhook(context.Background(), webhook.Vote{
		Vote: topgg.Vote{
			UserID:     userID(1),
			PlatformID: platformID(1),
			Weight:     1,
			CreatedAt:  old.Add(300 * time.Nanosecond),
			ExpiresAt:  old.Add(voterewards.VoteLifetime),
		},
		Version: 1,
		ID:      "late",
	}))
	assert.Never(t, func() bool { return rec.total() != 2 }, 200*time.Millisecond, 10*time.Millisecond, "the late webhook vote was rewarded again")
	st, err := store.Stats(context.Background(), platformID(1))
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes)
}

// TestFutureVoteDoesNotStallLaterRewards: a vote dated a day ahead used to
// make the poller ask for votes from that date on, so no later vote was ever
// rewarded. Its time is clamped, and the next vote is rewarded.
func TestFutureVoteDoesNotStallLaterRewards(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	future := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(24 * time.Hour)}
	srv.AddVote(future)
	rec := newRecorder()
	// Without cursors the poll goes on from the newest vote seen: the path
	// the future date poisoned.
	p := startPoller(t, noCursor{newClient(t, srv)}, voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore()})
	require.Eventually(t, func() bool { return rec.count() == 1 && p.Active(userID(1)).Covered }, 5*time.Second, time.Millisecond)
	rec.mu.Lock()
	for _, v := range rec.votes {
		assert.False(t, v.CreatedAt.After(time.Now().Add(voterewards.MaxClockSkew)), "created_at clamped: %s", v.CreatedAt)
		assert.True(t, v.ExpiresAt.After(v.CreatedAt))
	}
	rec.mu.Unlock()

	later := topggtest.Vote{UserID: userID(2), PlatformID: platformID(2), CreatedAt: time.Now()}
	srv.AddVote(later)
	require.Eventually(t, func() bool { return rec.snapshot()[keyOf(later)] == 1 }, 5*time.Second, time.Millisecond,
		"a vote after a future-dated one is rewarded")
	for _, r := range votesRequests(srv) {
		if sd := r.Query.Get("startDate"); sd != "" {
			start, err := time.Parse(time.RFC3339Nano, sd)
			require.NoError(t, err)
			assert.False(t, start.After(time.Now()), "never asks for the future: %s", start)
		}
	}
}

// scripted serves the pages its function returns.
type scripted func(q topgg.VotesQuery) (*topgg.VotePage, error)

func (s scripted) Votes(_ context.Context, q topgg.VotesQuery) (*topgg.VotePage, error) { return s(q) }

// TestAbsurdVoteFieldsAreCorrected: the siblings of the future date. Each
// vote goes on, with sane values, and none blocks the others.
func TestAbsurdVoteFieldsAreCorrected(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	clk := clock.NewFake(now)
	votes := []topgg.Vote{
		{UserID: userID(1), PlatformID: platformID(1), Weight: 1, CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(-2 * time.Hour)}, // expires before created
		{UserID: userID(2), PlatformID: platformID(2), Weight: 1, ExpiresAt: now.Add(time.Hour)},                                      // no created_at
		{UserID: userID(3), PlatformID: platformID(3), Weight: 1_000_000, CreatedAt: now.Add(-time.Hour)},                             // absurd weight, no expiry
		{UserID: userID(4), PlatformID: platformID(4), Weight: -3, CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(100 * 24 * time.Hour)},
		{Weight: 1, CreatedAt: now.Add(-time.Hour)}, // no id at all: skipped
		{UserID: userID(6), PlatformID: platformID(6), Weight: 2, CreatedAt: now.Add(-30 * time.Minute), ExpiresAt: now.Add(11*time.Hour + 30*time.Minute)},
	}
	var served atomic.Bool
	src := scripted(func(topgg.VotesQuery) (*topgg.VotePage, error) {
		if served.Swap(true) {
			return &topgg.VotePage{}, nil
		}
		return &topgg.VotePage{Votes: votes}, nil
	})
	rec := newRecorder()
	p := startPoller(t, src, voterewards.WithClock(voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore()}, clk))
	require.Eventually(t, func() bool { return rec.count() == 5 }, 5*time.Second, time.Millisecond)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, v := range rec.votes {
		assert.True(t, v.ExpiresAt.After(v.CreatedAt), "%s: expires after created", v.UserID)
		assert.LessOrEqual(t, v.ExpiresAt.Sub(v.CreatedAt), 2*voterewards.VoteLifetime, "%s", v.UserID)
		assert.False(t, v.CreatedAt.IsZero(), "%s", v.UserID)
		assert.GreaterOrEqual(t, v.Weight, 1)
		assert.LessOrEqual(t, v.Weight, voterewards.MaxWeight)
	}
	st := p.Active(platformID(4))
	assert.True(t, st.Until.Before(now.Add(2*voterewards.VoteLifetime)), "an absurd expiry does not keep a user active for months")
}

// idleBoltPoller is a Poller on a bolt store, not running: webhook votes are
// stored and counted by IngestWebhook alone.
func idleBoltPoller(t *testing.T) *voterewards.Poller {
	t.Helper()
	s, err := boltstate.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	p, err := voterewards.New(historyNever{}, voterewards.Config{
		Store: s, OnReward: func(context.Context, voterewards.Vote) error { return nil },
	})
	require.NoError(t, err)
	return p
}

// TestAncientHistoryVoteKeepsTheLedgerMoving: a vote of the history created before 1678
// (a service's bug) passes sanitize; its time does not fit the stores'
// nanosecond encoding (bolt's putTime, pgstore's UnixNano), so the ledger
// keeps another time: the bolt voter's LastVote becomes 2169 (the 1000 vote
// read back), every later vote is "late", and the streak and month never
// move again. sanitize must refuse it or treat it as missing. (A webhook
// vote that old is now dropped as expired on arrival, 3111948; the history
// path still counts it.)
func TestAncientHistoryVoteKeepsTheLedgerMoving(t *testing.T) {
	ctx := context.Background()
	s, err := boltstate.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	now := time.Now().UTC().Truncate(time.Second)
	ancient := time.Date(1000, 6, 15, 0, 0, 0, 0, time.UTC)
	const user = "3000000000000000001"
	src := &onePage{page: topgg.VotePage{Cursor: "c1", Votes: []topgg.Vote{
		{PlatformID: user, Weight: 1, CreatedAt: ancient, ExpiresAt: ancient.Add(voterewards.VoteLifetime)},
		{PlatformID: user, Weight: 1, CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)},
	}}}
	startPoller(t, src, voterewards.Config{Store: s, OnReward: func(context.Context, voterewards.Vote) error { return nil }})
	var st voterewards.Stats
	require.Eventually(t, func() bool {
		st, err = s.Stats(ctx, user)
		return err == nil && st.Votes > 0
	}, 10*time.Second, 5*time.Millisecond, "the page was not ingested")
	assert.True(t, st.LastVote.Equal(now), "LastVote %v, want the modern vote's %v", st.LastVote, now)
	votes, _ := st.ThisMonth(now)
	assert.Positive(t, votes, "the modern vote counts in its month")
	assert.Equal(t, 1, st.CurrentStreak(now), "the modern vote starts a streak")
}

// onePage is a History that answers one page, then no new vote.
type onePage struct {
	mu   sync.Mutex
	page topgg.VotePage
	sent bool
}

func (o *onePage) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sent {
		return &topgg.VotePage{Cursor: o.page.Cursor}, nil
	}
	o.sent = true
	p := o.page
	return &p, nil
}

// TestControlCharactersInIDs: Discord and Top.gg ids are numbers; an
// id holding a control character or invalid UTF-8 is stored by bolt but
// fails PostgreSQL's text (NUL, bad UTF-8: the whole Ingest fails on every
// retry) and splits pgstore's feed payloads ("\n"). checkIDs should refuse
// it (ErrInvalidVote) so that every store sees the same votes.
func TestControlCharactersInIDs(t *testing.T) {
	ctx := context.Background()
	p := idleBoltPoller(t)
	now := time.Now().UTC()
	for _, id := range []string{"3\x00001", "3\n001", "3\xff001"} {
		err := p.IngestWebhook(ctx, webhook.Vote{Vote: topgg.Vote{PlatformID: id, Weight: 1, CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)}, Version: 1, ID: "v" + id})
		assert.ErrorIs(t, err, voterewards.ErrInvalidVote, "%q", id)
	}
}

// TestFutureVoteKeepsNoFarExpiry: a vote stamped ahead of the clock is moved
// back whole, from every source: its expiry does not stay up to a day ahead
// of the clamped created_at (a history vote 11 h ahead was active until now +
// 23 h, a webhook vote 1 h ahead until now + 13 h).
func TestFutureVoteKeepsNoFarExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	store := voterewards.NewMemoryStore()
	p, err := voterewards.New(historyNever{}, voterewards.WithClock(voterewards.Config{
		Store: store, OnReward: func(context.Context, voterewards.Vote) error { return nil },
	}, clock.NewFake(now)))
	require.NoError(t, err)
	hist := func(n int, ahead time.Duration) {
		c := now.Add(ahead)
		require.NoError(t, p.Ingest(ctx, voterewards.Vote{Origin: voterewards.OriginHistory,
			Vote: topgg.Vote{UserID: userID(n), PlatformID: platformID(n), Weight: 1, CreatedAt: c, ExpiresAt: c.Add(voterewards.VoteLifetime)}}))
	}
	hook := func(n int, ahead time.Duration, version int) {
		c := now.Add(ahead)
		require.NoError(t, p.IngestWebhook(ctx, webhook.Vote{
			Vote: topgg.Vote{
				UserID:     userID(n),
				PlatformID: platformID(n),
				Weight:     1,
				CreatedAt:  c,
				ExpiresAt:  c.Add(voterewards.VoteLifetime),
			},
			Version: version,
			ID:      "v" + platformID(n),
		}))
	}
	hist(1, 11*time.Hour)
	hook(2, time.Hour, 1)
	hook(3, 11*time.Hour, 1)
	hook(4, 11*time.Hour, 0)
	hist(5, 30*time.Second) // within the skew: kept as sent
	latest := now.Add(voterewards.MaxClockSkew + voterewards.VoteLifetime)
	for n := 1; n <= 5; n++ {
		st := p.Active(platformID(n))
		require.True(t, st.Active, "vote %d", n)
		assert.False(t, st.Until.After(latest), "vote %d active until now+%v", n, st.Until.Sub(now))
		stats, err := store.Stats(ctx, platformID(n))
		require.NoError(t, err)
		assert.False(t, stats.StreakUntil.After(latest.Add(voterewards.DefaultStreakGrace)), "vote %d streak until now+%v", n, stats.StreakUntil.Sub(now))
	}
	assert.Equal(t, now.Add(30*time.Second+voterewards.VoteLifetime), p.Active(platformID(5)).Until)
}

// lostAnswerStore is a store of one process (no Feed) whose Ingest commits,
// then fails while lose is set: the answer lost, as on a timeout after commit.
type lostAnswerStore struct {
	voterewards.State
	lose atomic.Bool
}

func (s *lostAnswerStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	added, err := s.State.Ingest(ctx, cp, votes, grace)
	if err == nil && s.lose.Load() {
		return nil, errStoreDown
	}
	return added, err
}

// TestIngestThatFailsAfterCommittingIsDeliveredInThisRun: the store keeps
// the votes but the answer is lost, for a page of the history and for a
// webhook (whose retry then finds a duplicate). Each vote is rewarded once
// by the running Run, not parked until the next one.
func TestIngestThatFailsAfterCommittingIsDeliveredInThisRun(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	store := &lostAnswerStore{State: voterewards.NewMemoryStore()}
	store.lose.Store(true)
	rec := newRecorder()
	p := startPoller(t, newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: store})
	srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-time.Hour)})
	n := len(votesRequests(srv))
	require.Eventually(t, func() bool { return len(votesRequests(srv)) >= n+2 }, 5*time.Second, time.Millisecond, "polling stopped")
	store.lose.Store(false)
	require.Eventually(t, func() bool { return rec.count() == 1 }, 5*time.Second, time.Millisecond,
		"a page whose Ingest committed but failed was not delivered by the running Run")

	store.lose.Store(true)
	w := webhookVote(2, time.Now())
	require.Error(t, p.Ingest(context.Background(), w), "the lost answer")
	store.lose.Store(false)
	require.NoError(t, p.Ingest(context.Background(), w), "the webhook's retry")
	require.Eventually(t, func() bool { return rec.count() == 2 }, 5*time.Second, time.Millisecond,
		"a webhook vote whose Ingest committed but failed was not delivered by the running Run")
	for k, c := range rec.snapshot() {
		assert.Equal(t, 1, c, "vote %s rewarded %d times", k, c)
	}
}
