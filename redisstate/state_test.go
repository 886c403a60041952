package redisstate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterewards/storetest"
)

// TestNewRefusesWhatFleetRefuses: New contacts no server, and refuses a nil
// client and a bot name fleet cannot use in its keys.
func TestNewRefusesWhatFleetRefuses(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = rdb.Close() })
	_, err := New(nil, "b")
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	_, err = New((*redis.Client)(nil), "b")
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	for _, bot := range []string{"", "a{b}", "a b"} {
		_, err = New(rdb, bot)
		require.ErrorAs(t, err, new(*topgg.ConfigError), bot)
	}
	s, err := New(rdb, "b")
	require.NoError(t, err)
	assert.Equal(t, fleet.Key("b", "votes:seen"), s.seen, "fleet's key space: an existing fleet's votes are kept")
}

// leaderWrites are the state's leader writes, each of one new vote.
func leaderWrites(s *State) map[string]func(context.Context) error {
	v := testVote(1)
	return map[string]func(context.Context) error{
		"Ingest with a checkpoint": func(ctx context.Context) error {
			_, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c"}, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
			return err
		},
		"Delivered": func(ctx context.Context) error { return s.Delivered(ctx, v, true) },
		"Expired":   func(ctx context.Context) error { return s.Expired(ctx, v) },
		"Prune":     func(ctx context.Context) error { return s.Prune(ctx, time.Now(), time.Now()) },
		"SaveHash":  func(ctx context.Context) error { return s.SaveHash(ctx, "h") },
		"Reminded":  func(ctx context.Context) error { return s.Reminded(ctx, "1", v.Key()) },
	}
}

// TestUseFenceFencesEveryLeaderWrite: before UseFence every leader write
// fails with fleet.ErrNoFence (reads and the writes of any process pass);
// UseFence takes a fence once, never nil; then each leader write is checked
// against the token the fence returns at that moment: the leader's passes,
// 0 is ErrNoFence, an older term's is ErrFenced.
func TestUseFenceFencesEveryLeaderWrite(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := newClient(t, srv.Addr())
	lease := runLease(t, rdb, "usefence")
	require.Eventually(t, func() bool { return lease.State().Leader }, 10*time.Second, time.Millisecond)
	s, err := New(rdb, "usefence")
	require.NoError(t, err)

	for name, write := range leaderWrites(s) {
		require.ErrorIs(t, write(ctx), fleet.ErrNoFence, "%s before UseFence", name)
	}
	_, err = s.Ingest(ctx, nil, []voterewards.Vote{testVote(2)}, voterewards.DefaultStreakGrace)
	require.NoError(t, err, "a webhook vote needs no fence")
	require.NoError(t, s.SetReminder(ctx, "1", true), "an opt-in needs no fence")
	_, err = s.Load(ctx)
	require.NoError(t, err)

	require.ErrorIs(t, s.UseFence(nil), voterewards.ErrNeedsFence)
	var token atomic.Int64
	require.NoError(t, s.UseFence(func() int64 { return token.Load() }))
	require.ErrorIs(t, s.UseFence(func() int64 { return lease.State().Token }), errFenceGiven)

	for name, write := range leaderWrites(s) {
		require.ErrorIs(t, write(ctx), fleet.ErrNoFence, "%s with token 0", name)
	}
	leading := lease.State().Token
	token.Store(leading)
	for name, write := range leaderWrites(s) {
		require.NoError(t, write(ctx), "%s with the leader's token", name)
	}
	token.Store(leading - 1)
	for name, write := range leaderWrites(s) {
		require.ErrorIs(t, write(ctx), fleet.ErrFenced, "%s with an older term's token", name)
	}
}

func TestHashSavedOnlyByTheNewestLeader(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	hash := strings.Repeat("ab", 32)
	a, lease := leadingState(t, srv, "hs")
	b, _ := startProcess(t, srv.Addr(), "hs")

	got, err := b.LoadHash(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "nothing saved yet")
	require.NoError(t, a.SaveHash(ctx, hash))
	got, err = b.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, hash, got, "a follower reads what the leader saved")
	require.ErrorIs(t, b.SaveHash(ctx, "follower"), fleet.ErrNoFence)

	// A newer term (as if another process won while a was paused): a's
	// SaveHash is refused although a still believes it leads.
	require.NoError(t, rdb.Incr(ctx, fleet.Key("hs", "fence")).Err())
	require.True(t, lease.State().Leader)
	require.ErrorIs(t, a.SaveHash(ctx, "stale"), fleet.ErrFenced)
	got, err = a.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, hash, got)
}

// TestRemindersOptInAnywhereRecordFencedByTheLeader: any process sets a
// choice; only the current leader records a reminder (a follower gets
// fleet.ErrNoFence, a stale leader fleet.ErrFenced), and only for a user still
// opted in; turning reminders on again keeps the record. The example bot's old
// set is read as opted in and moved to the hash on the next change.
func TestRemindersOptInAnywhereRecordFencedByTheLeader(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	ra, _ := leadingState(t, srv, "rm")
	rb, _ := startProcess(t, srv.Addr(), "rm")

	require.NoError(t, rb.SetReminder(ctx, "1", true), "a follower records an opt-in")
	require.NoError(t, ra.Reminded(ctx, "1", "1@k"))
	require.ErrorIs(t, rb.Reminded(ctx, "1", "1@other"), fleet.ErrNoFence)
	require.NoError(t, ra.Reminded(ctx, "2", "2@k"), "not opted in: nothing recorded")
	require.NoError(t, rb.SetReminder(ctx, "1", true))
	check := func(user string, wantOn bool, wantLast string) {
		t.Helper()
		on, last, err := rb.Reminder(ctx, user)
		require.NoError(t, err)
		assert.Equal(t, wantOn, on, user)
		assert.Equal(t, wantLast, last, user)
	}
	check("1", true, "1@k")
	check("2", false, "")

	require.NoError(t, rdb.SAdd(ctx, fleet.Key("rm", "set:reminders"), "3").Err())
	check("3", true, "")
	require.NoError(t, ra.Reminded(ctx, "3", "3@k"))
	check("3", true, "3@k")
	assert.False(t, rdb.SIsMember(ctx, fleet.Key("rm", "set:reminders"), "3").Val(), "moved to the hash")
	require.NoError(t, rdb.SAdd(ctx, fleet.Key("rm", "set:reminders"), "4").Err())
	require.NoError(t, rb.SetReminder(ctx, "4", false))
	check("4", false, "")

	require.NoError(t, rdb.Incr(ctx, fleet.Key("rm", "fence")).Err()) // a newer term
	require.ErrorIs(t, ra.Reminded(ctx, "1", "1@new"), fleet.ErrFenced)
	check("1", true, "1@k")
}

// TestStatePrintsByName: fmt of a State walked its Redis client's live state;
// under every verb it prints its name alone.
func TestStatePrintsByName(t *testing.T) {
	t.Parallel()
	rdb, err := fleet.NewUniversalClient("redis://:hunter2@127.0.0.1:1/0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := New(rdb, "b")
	require.NoError(t, err)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		assert.Equal(t, "redisstate.State", fmt.Sprintf(verb, s), verb)
	}
}

func TestStatePassesTheStoreSuite(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var n atomic.Int32
	storetest.Run(t, func(t *testing.T) voterewards.State {
		s, _ := leadingState(t, srv, fmt.Sprintf("suite%d", n.Add(1)))
		return s
	})
}

// testVote is a sanitized webhook vote of voter u, created now.
func testVote(u int) voterewards.Vote {
	now := time.Now()
	return voteOf(u, 1, voterewards.OriginWebhook, now, now.Add(voterewards.VoteLifetime))
}

// voteOf is voter u's vote of weight w from origin, created at c and
// expiring at e, both in UTC without a monotonic reading.
func voteOf(u, w int, origin voterewards.Origin, c, e time.Time) voterewards.Vote {
	tv := topgg.Vote{UserID: fmt.Sprintf("7%017d", u), PlatformID: fmt.Sprintf("3%017d", u), Weight: w,
		CreatedAt: c.UTC(), ExpiresAt: e.UTC()}
	return voterewards.Vote{Vote: tv, Origin: origin}
}

// TestVoteStoreFencesTheLeadersWrites: a follower may ingest webhook votes
// but not save the checkpoint or record deliveries; a leader replaced by a
// newer term (as if it had been paused) is refused too.
func TestVoteStoreFencesTheLeadersWrites(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	leader, lease := leadingState(t, srv, "fenced")
	follower, _ := startProcess(t, srv.Addr(), "fenced")

	a, b := testVote(1), testVote(2)
	added, err := follower.Ingest(ctx, nil, []voterewards.Vote{a}, voterewards.DefaultStreakGrace)
	require.NoError(t, err, "any process ingests webhook votes")
	require.Len(t, added, 1)
	_, err = follower.Ingest(ctx, &voterewards.Checkpoint{Cursor: "x"}, []voterewards.Vote{b}, voterewards.DefaultStreakGrace)
	require.ErrorIs(t, err, fleet.ErrNoFence)
	require.ErrorIs(t, follower.Delivered(ctx, a, true), fleet.ErrNoFence)
	require.ErrorIs(t, follower.Expired(ctx, a), fleet.ErrNoFence)
	require.ErrorIs(t, follower.Prune(ctx, time.Now(), time.Now()), fleet.ErrNoFence)

	_, err = leader.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c1"}, []voterewards.Vote{b}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.NoError(t, leader.Delivered(ctx, a, true))

	require.NoError(t, srv.Client(t).Incr(ctx, fleet.Key("fenced", "fence")).Err()) // a newer term
	require.True(t, lease.State().Leader, "the old leader still believes it leads")
	_, err = leader.Ingest(ctx, &voterewards.Checkpoint{Cursor: "stale"}, []voterewards.Vote{testVote(3)}, voterewards.DefaultStreakGrace)
	require.ErrorIs(t, err, fleet.ErrFenced)
	require.ErrorIs(t, leader.Delivered(ctx, b, false), fleet.ErrFenced)
	require.ErrorIs(t, leader.Expired(ctx, a), fleet.ErrFenced)

	snap, err := follower.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "c1", snap.Checkpoint.Cursor)
	assert.Len(t, snap.Seen, 2, "the refused ingest added nothing")
	assert.Equal(t, []string{b.Key()}, []string{snap.Pending[0].Key()})
	assert.Equal(t, a.Key(), snap.Expiries[0].Key())
}

// TestVoteStoreFeedResyncsAfterRedisRestarts: a follower is told to resync
// once listening and again after Redis came back, and then gets new votes.
func TestVoteStoreFeedResyncsAfterRedisRestarts(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s, _ := leadingState(t, srv, "resync")
	ctx, cancel := context.WithCancel(context.Background())
	var resyncs atomic.Int32
	got := make(chan string, 16)
	done := make(chan error, 1)
	go func() {
		done <- s.Follow(ctx, func(v voterewards.Vote) { got <- v.Key() }, func() { resyncs.Add(1) })
	}()
	require.Eventually(t, func() bool { return resyncs.Load() == 1 }, 5*time.Second, time.Millisecond)

	srv.Kill()
	srv.Restart()
	require.Eventually(t, func() bool { return resyncs.Load() >= 2 }, 10*time.Second, 5*time.Millisecond,
		"no resync after Redis restarted")
	v := testVote(9)
	require.Eventually(t, func() bool {
		_, err := s.Ingest(context.Background(), nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	select {
	case k := <-got:
		assert.Equal(t, v.Key(), k)
	case <-time.After(5 * time.Second):
		t.Fatal("a vote ingested after the restart never reached the follower")
	}
	cancel()
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)
}

// TestVoteStoreFeedReachesOtherProcesses runs three processes on their own
// clients: the leader's Poller.Run, and two followers' Poller.Mirror. A
// webhook vote ingested by one follower reaches the leader's reward handler
// and every process's Active at once (through pub/sub, with no polling of
// Redis; see BenchmarkVoteFeedLatency for the figure).
func TestVoteStoreFeedReachesOtherProcesses(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	client, err := tg.NewClient()
	require.NoError(t, err)

	rewarded := make(chan voterewards.Vote, 4)
	poller := func(s voterewards.Store) *voterewards.Poller {
		p, err := voterewards.New(client, voterewards.Config{Store: s, OnReward: func(_ context.Context, v voterewards.Vote) error {
			rewarded <- v
			return nil
		}})
		require.NoError(t, err)
		return p
	}
	run := func(f func(context.Context) error) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- f(ctx) }()
		t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })
	}
	ls, _ := leadingState(t, srv, "feed")
	leader := poller(ls)
	run(leader.Run)
	var followers []*voterewards.Poller
	for range 2 {
		s, _ := startProcess(t, srv.Addr(), "feed")
		p := poller(s)
		run(p.Mirror)
		followers = append(followers, p)
	}
	v := testVote(42)
	// Mirror's first load and subscription: wait until a vote ingested by
	// another process shows, then check the one under test.
	require.NoError(t, followers[0].Ingest(context.Background(), v))
	select {
	case got := <-rewarded:
		assert.Equal(t, v.Key(), got.Key())
	case <-time.After(5 * time.Second):
		t.Fatal("the leader never delivered a vote ingested by a follower")
	}
	for i, p := range append([]*voterewards.Poller{leader}, followers...) {
		assert.Eventually(t, func() bool { return p.Active(v.PlatformID).Active }, 5*time.Second, time.Millisecond,
			"process %d never saw the vote", i)
	}
}

// TestVoteStoreDamagedRecords: a record that does not decode fails Load with
// an error (never a panic), and a damaged feed message asks for a resync.
func TestVoteStoreDamagedRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, s := newLeader(t, "damaged")
	rdb := srv.Client(t)

	fctx, cancel := context.WithCancel(ctx)
	var resyncs atomic.Int32
	done := make(chan error, 1)
	go func() { done <- s.Follow(fctx, func(voterewards.Vote) {}, func() { resyncs.Add(1) }) }()
	require.Eventually(t, func() bool { return resyncs.Load() == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, rdb.Publish(ctx, fleet.Key("damaged", "votes:added"), "not a vote").Err())
	require.Eventually(t, func() bool { return resyncs.Load() == 2 }, 5*time.Second, time.Millisecond)
	cancel()
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)

	require.NoError(t, rdb.HSet(ctx, fleet.Key("damaged", "votes:pending"), "k", "{broken").Err())
	_, err := s.Load(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "damaged vote record")
	require.NoError(t, rdb.Del(ctx, fleet.Key("damaged", "votes:pending")).Err())
	_, err = s.Load(ctx)
	require.NoError(t, err)
	require.NoError(t, rdb.Set(ctx, fleet.Key("damaged", "votes:checkpoint"), "garbage", 0).Err())
	_, err = s.Load(ctx)
	require.Error(t, err)

	require.ErrorIs(t, s.Follow(ctx, nil, nil), topgg.ErrNilArgument)
	require.NoError(t, s.Ping(ctx))
}

// rawVote is a vote of voter u with the given times, as a writer that does
// not sanitize (an older version, a planted record) leaves it in Redis.
func rawVote(u int, created, expires time.Time) voterewards.Vote {
	return voteOf(u, 1, voterewards.OriginWebhook, created, expires)
}

// TestVoteStorePruneIsNotStoppedByAnExpiryFromTheFuture: a record in a real
// Redis whose expiry is a year away would stop every prune at it (the prune
// walks in creation order and stops at the first vote not expired), and the
// dedup set would grow for ever. Its expiry is read as sanitize would fix it.
func TestVoteStorePruneIsNotStoppedByAnExpiryFromTheFuture(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s := newLeader(t, "prunefuture")
	now := time.Now()
	planted := rawVote(1, now.Add(-72*time.Hour), now.Add(365*24*time.Hour))
	old := rawVote(2, now.Add(-48*time.Hour), now.Add(-36*time.Hour))
	fresh := rawVote(3, now.Add(-time.Hour), now.Add(11*time.Hour))
	_, err := s.Ingest(ctx, nil, []voterewards.Vote{planted, old, fresh}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)

	require.NoError(t, s.Prune(ctx, now.Add(-voterewards.DedupWindow), now))
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	var keys []string
	for _, v := range snap.Seen {
		keys = append(keys, v.Key())
	}
	assert.Equal(t, []string{fresh.Key()}, keys, "the planted expiry stopped the prune")
}

// TestPollerClampsTimesFromTheFutureInRedis: a checkpoint whose LastSeen and
// Since lie a year ahead, and a delivered vote whose expiry lies a year
// ahead, planted in a real Redis. The leader's poller must not skip the
// history until next year (it reads from the lookback again), must fire the
// expiry (clamped to creation + VoteLifetime), and logs it once.
func TestPollerClampsTimesFromTheFutureInRedis(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s := newLeader(t, "pollfuture")
	now := time.Now()
	year := now.Add(365 * 24 * time.Hour)
	stuck := rawVote(1, now.Add(-13*time.Hour), year)
	_, err := s.Ingest(ctx, &voterewards.Checkpoint{LastSeen: year, Since: year}, []voterewards.Vote{stuck}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.NoError(t, s.Delivered(ctx, stuck, true))

	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	missed := topggtest.Vote{UserID: "700000000000000002", PlatformID: "300000000000000002", CreatedAt: now.Add(-time.Hour)}
	tg.AddVote(missed)
	client, err := tg.NewClient()
	require.NoError(t, err)
	rewarded := make(chan string, 4)
	expired := make(chan string, 4)
	var logs testlog.Buffer
	p, err := voterewards.New(client, voterewards.Config{Store: s, Logger: logs.Logger(), Interval: 50 * time.Millisecond,
		OnReward: func(_ context.Context, v voterewards.Vote) error { rewarded <- v.PlatformID; return nil },
		OnExpire: func(_ context.Context, v voterewards.Vote) error { expired <- v.Key(); return nil }})
	require.NoError(t, err)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(rctx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })

	select {
	case got := <-rewarded:
		assert.Equal(t, missed.PlatformID, got)
	case <-time.After(5 * time.Second):
		t.Fatal("a checkpoint from the future made the poll skip the history")
	}
	select {
	case got := <-expired:
		assert.Equal(t, stuck.Key(), got)
	case <-time.After(5 * time.Second):
		t.Fatal("an expiry a year away was scheduled for next year")
	}
	require.NoError(t, p.Redeliver(ctx)) // one more load of the store: not logged again
	assert.Equal(t, 1, strings.Count(logs.String(), "times in the future or out of range"), logs.String())
}

// TestFeedVoteFromTheFutureIsClamped: a vote published on the store's feed
// channel (by a process whose clock is ahead, or planted) with an expiry a
// year away would keep the voter Active for a year in every follower. Its
// times are fixed as sanitize fixes them.
func TestFeedVoteFromTheFutureIsClamped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, s := newLeader(t, "feedfuture")
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	client, err := tg.NewClient()
	require.NoError(t, err)
	var logs testlog.Buffer
	p, err := voterewards.New(client, voterewards.Config{Store: s, Logger: logs.Logger(),
		OnReward: func(context.Context, voterewards.Vote) error { return nil }})
	require.NoError(t, err)
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Mirror(mctx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })

	// Wait until the mirror has subscribed: a message published before that
	// is lost (pub/sub keeps nothing), and the planted vote is in no store a
	// resync could read. A probe vote made Active proves only the first load.
	channel, rdb := fleet.Key("feedfuture", "votes:added"), srv.Client(t)
	require.Eventually(t, func() bool {
		n, err := rdb.PubSubNumSub(ctx, channel).Result()
		return err == nil && n[channel] > 0
	}, 5*time.Second, 5*time.Millisecond)

	now := time.Now()
	created := now.Add(-time.Hour)
	planted := fmt.Sprintf(`{"k":"3%017d@x","u":"7%017d","p":"3%017d","w":1,"c":%d,"e":%d,"o":1}`,
		2, 2, 2, created.UnixNano(), now.Add(365*24*time.Hour).UnixNano())
	require.NoError(t, rdb.Publish(ctx, channel, planted).Err())
	id := fmt.Sprintf("3%017d", 2)
	require.Eventually(t, func() bool { return p.Active(id).Active }, 5*time.Second, time.Millisecond)
	until := p.Active(id).Until
	assert.False(t, until.After(created.Add(voterewards.VoteLifetime)), "active until %s, a year away", until)
	assert.Contains(t, logs.String(), "times in the future or out of range")
}

// ledgerVote is voter u's vote created at c (expiring 12 h later).
func ledgerVote(u int, c time.Time, weight int) voterewards.Vote {
	return voteOf(u, weight, voterewards.OriginHistory, c, c.Add(voterewards.VoteLifetime))
}

// TestVoteLedgerKeysShareTheBotsSlot: every key the ledger writes (votes
// over several months) is in the bot's key space, so that on Redis Cluster
// the ingest script's keys are in one slot.
func TestVoteLedgerKeysShareTheBotsSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, s := newLeader(t, "slot")
	base := time.Date(2026, 1, 31, 20, 0, 0, 0, time.UTC)
	var votes []voterewards.Vote
	for i := range 6 {
		votes = append(votes, ledgerVote(i%2, base.Add(time.Duration(i)*20*24*time.Hour), 1))
	}
	_, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c"}, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)

	keys, err := srv.Client(t).Keys(ctx, "*").Result()
	require.NoError(t, err)
	var boards int
	for _, k := range keys {
		assert.True(t, strings.HasPrefix(k, fleet.Key("slot", "")), "key %q is outside the bot's hash tag", k)
		if strings.Contains(k, ":votes:board:") {
			boards++
		}
	}
	assert.Equal(t, 5, boards, "one board per month touched (Jan to May)")
}

// TestVoteLedgerIsBoundedPerVoter: a voter's 120 votes over two months
// leave one ledger field, one all-time board member, and one standing per
// month: no per-vote history once the dedup set is pruned.
func TestVoteLedgerIsBoundedPerVoter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, s := newLeader(t, "bounded")
	rdb := srv.Client(t)
	base := time.Date(2026, 3, 1, 0, 30, 0, 0, time.UTC)
	var want voterewards.Stats
	for i := range 120 {
		v := ledgerVote(1, base.Add(time.Duration(i)*12*time.Hour), 1+i%2)
		added, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
		require.NoError(t, err)
		require.Len(t, added, 1)
		want = want.Add(v, voterewards.DefaultStreakGrace)
	}
	require.NoError(t, s.Prune(ctx, base.Add(365*24*time.Hour), base.Add(365*24*time.Hour)))
	got, err := s.Stats(ctx, want.UserID)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, 120, got.Streak, "a vote every 12 h is one streak")

	assert.EqualValues(t, 1, rdb.HLen(ctx, s.ledger).Val())
	assert.EqualValues(t, 1, rdb.ZCard(ctx, s.board).Val())
	for _, m := range []time.Time{base, base.AddDate(0, 1, 0)} {
		board, standings := s.monthKeys(m)
		assert.EqualValues(t, 1, rdb.ZCard(ctx, board).Val())
		assert.EqualValues(t, 1, rdb.HLen(ctx, standings).Val())
	}
	assert.Zero(t, rdb.HLen(ctx, s.seen).Val(), "pruned: the ledger outlives the dedup set")
}

// TestVoteLedgerFarTimes: votes before 1970 and in year 1 (the zero
// month's edge, where the Lua rule must tell a zero Month from a real one)
// give the Stats and boards of Stats.Add.
func TestVoteLedgerFarTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s := newLeader(t, "far")
	for u, base := range []time.Time{
		time.Date(1969, 12, 31, 18, 0, 0, 999_999_999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(2999, 12, 31, 23, 59, 59, 5, time.UTC),
	} {
		var want voterewards.Stats
		for i, d := range []time.Duration{0, 13 * time.Hour, 72 * time.Hour, 36 * time.Hour, 100 * time.Hour} {
			v := ledgerVote(u, base.Add(d), i%3)
			added, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
			require.NoError(t, err)
			require.Len(t, added, 1, "base %s, vote %d", base, i)
			want = want.Add(v, voterewards.DefaultStreakGrace)
			assert.Equal(t, want, added[0].Stats, "base %s, vote %d", base, i)
		}
		got, err := s.Stats(ctx, want.UserID)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		board, err := s.Leaderboard(ctx, want.Month, 10)
		require.NoError(t, err)
		i := slices.IndexFunc(board, func(st voterewards.Standing) bool { return st.UserID == want.UserID })
		require.GreaterOrEqual(t, i, 0, "base %s: not on its month's board", base)
		wantTotal := want.MonthTotal
		if want.Month.IsZero() { // year 1's January is the zero month: all time is read
			wantTotal = want.Total
		}
		assert.Equal(t, wantTotal, board[i].Total)
		assert.Equal(t, want.LastVote, board[i].ReachedAt)
	}
}

// TestVoteLedgerRefusedIngestCountsNothing: a stale leader's fenced ingest
// is refused before the ledger moves.
func TestVoteLedgerRefusedIngestCountsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, s := newLeader(t, "refused")
	require.NoError(t, srv.Client(t).Incr(ctx, fleet.Key("refused", "fence")).Err())
	v := ledgerVote(1, time.Now(), 1)
	_, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "x"}, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	require.ErrorIs(t, err, fleet.ErrFenced)
	st, err := s.Stats(ctx, v.PlatformID)
	require.NoError(t, err)
	assert.Equal(t, voterewards.Stats{UserID: v.PlatformID}, st)
	board, err := s.Leaderboard(ctx, time.Time{}, 10)
	require.NoError(t, err)
	assert.Empty(t, board)
}

// TestVoteLedgerDamagedRecords: a ledger, checkpoint or vote record that
// does not decode is an error naming its key from Stats, Leaderboard and
// Load, never a panic or a zero.
func TestVoteLedgerDamagedRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, s := newLeader(t, "damagedledger")
	v := ledgerVote(1, time.Now(), 1)
	_, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	rdb := srv.Client(t)
	require.NoError(t, rdb.HSet(ctx, s.ledger, v.PlatformID, "1 2 x").Err())
	_, err = s.Stats(ctx, v.PlatformID)
	require.ErrorIs(t, err, errBadLedger)
	assert.ErrorContains(t, err, s.ledger)
	require.NoError(t, rdb.HSet(ctx, s.ledger, v.PlatformID, "").Err())
	_, err = s.Leaderboard(ctx, time.Time{}, 10)
	require.ErrorIs(t, err, errBadLedger)
	assert.ErrorContains(t, err, s.ledger)
	require.NoError(t, rdb.HSet(ctx, s.seen, v.Key(), "not a vote").Err())
	_, err = s.Load(ctx)
	require.ErrorIs(t, err, errBadVote)
	assert.ErrorContains(t, err, s.seen)
	require.NoError(t, rdb.Set(ctx, s.checkpoint, "not-a-number 0 c", 0).Err())
	_, err = s.Load(ctx)
	require.ErrorIs(t, err, errBadVote)
	assert.ErrorContains(t, err, s.checkpoint)
}

// TestVoteLedgerReadsAreOneRoundTrip: Stats is one command, and a
// leaderboard (all time or a month) one script, whatever its size.
func TestVoteLedgerReadsAreOneRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, leader := newLeader(t, "trips")
	base := time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC)
	var votes []voterewards.Vote
	for u := range 50 {
		votes = append(votes, ledgerVote(u, base.Add(time.Duration(u)*time.Minute), 1+u%3))
	}
	_, err := leader.Ingest(ctx, nil, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)

	rdb := newClient(t, srv.Addr())
	trips := &roundTrips{}
	rdb.AddHook(trips)
	s, err := New(rdb, "trips")
	require.NoError(t, err)
	_, err = s.Leaderboard(ctx, time.Time{}, 1) // loads the script: later calls are one EVALSHA
	require.NoError(t, err)
	trips.N.Store(0)
	st, err := s.Stats(ctx, votes[7].PlatformID)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Total)
	assert.EqualValues(t, 1, trips.N.Swap(0), "Stats")
	for _, month := range []time.Time{{}, base} {
		board, err := s.Leaderboard(ctx, month, 50)
		require.NoError(t, err)
		assert.Len(t, board, 50)
		assert.EqualValues(t, 1, trips.N.Swap(0), "Leaderboard of %v", month)
	}
}

// TestVoteLedgerStatsOfNoUser: Stats(ctx, "") is misuse (the memory and
// bolt stores return an error wrapping topgg.ErrNilArgument), never a zero
// Stats.
func TestVoteLedgerStatsOfNoUser(t *testing.T) {
	t.Parallel()
	s, _ := leadingState(t, redistest.Start(t), "nouser")
	_, err := s.Stats(context.Background(), "")
	require.ErrorIs(t, err, topgg.ErrNilArgument)
}
