package redisstate

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
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
	now := time.Now().UTC().Round(0)
	tv := topgg.Vote{UserID: fmt.Sprintf("7%017d", u), PlatformID: fmt.Sprintf("3%017d", u), Weight: 1,
		CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)}
	return voterewards.Vote{Vote: tv, Origin: voterewards.OriginWebhook}
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
	require.NoError(t, <-done)
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
	require.NoError(t, <-done)

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
