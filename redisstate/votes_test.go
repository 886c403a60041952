package redisstate

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := leadingState(t, srv, "damaged")
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
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := leadingState(t, srv, "prunefuture")
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
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := leadingState(t, srv, "pollfuture")
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
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := leadingState(t, srv, "feedfuture")
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
