package redisstate

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
)

// sentinelURL is the fleet's URL of s: every sentinel, the master's name.
func sentinelURL(s *redistest.Sentinel) string {
	a := s.SentinelAddrs()
	return "redis+sentinel://" + a[0] + "/0?master_name=" + redistest.MasterName + "&addr=" + strings.Join(a[1:], "&addr=")
}

// TestSentinelFleetLosesNoVoteAcrossFailovers runs a three-process fleet
// (one shard each) through Sentinel, across two failovers.
//
// First, right after a delivered mark: the replica is cut off (paused, its
// link killed), so the leader's delivered marks (and the poll that ingested
// the votes) stay on the master, which is killed right after the marks: the
// promoted replica does not have those votes at all. The next term rewards
// exactly those votes a second time (the documented bound: the rewards
// recorded in the writes the failover undid), loses none, and rewards
// nothing else twice.
//
// Then, right after an election: the old master, restarted, is a replica
// again; the leader stops, and the master is killed within moments of the
// next election. The term after it has a larger token, and the votes that
// come then are rewarded once. Every post is the exact total.
func TestSentinelFleetLosesNoVoteAcrossFailovers(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	const shards, perShard = 3, 2
	w := newHAWorld(t, sentinelURL(s), shards, perShard)
	ps := []*haProcess{w.start(0, 0), w.start(1, 1), w.start(2, 2)}
	first := w.addVotes(0, 5)
	w.waitRewarded(first, "the first votes were never rewarded")
	// Every shard reported before the cut, so its count is on the replica: a
	// stopped process's count that only the dead master had would make its
	// shard missing, and the leader would rightly post nothing.
	require.Eventually(t, func() bool { return slices.Contains(w.postedTotals(), shards*perShard) },
		haWait, haTick, "the exact total was never posted")
	master, err := s.Master(ctx)
	require.NoError(t, err)
	replica := s.Other(master)
	mc := master.Client(t)
	require.Eventually(t, func() bool { return mc.HLen(ctx, fleet.Key(haBot, "votes:pending")).Val() == 0 },
		haWait, haTick, "the first delivered marks never reached the master")
	require.NoError(t, mc.Set(ctx, fleet.Key(haBot, "barrier"), "1", 0).Err())
	require.Equal(t, int64(1), mc.Wait(ctx, 1, 5*time.Second).Val(), "the replica did not catch up")
	require.Eventually(t, func() bool { return len(haLeaders(ps...)) == 1 }, haWait, haTick)
	leader := haLeaders(ps...)[0]

	replica.Pause()
	require.NoError(t, mc.ClientKillByFilter(ctx, "TYPE", "replica").Err())
	second := w.addVotes(5, 3)
	w.waitRewarded(second, "the leader did not reward the votes while the replica was cut off")
	require.Eventually(t, func() bool { return mc.HLen(ctx, fleet.Key(haBot, "votes:pending")).Val() == 0 },
		haWait, haTick, "the delivered marks never reached the master")
	before := w.tokens()
	master.Kill() // right after the delivered marks
	replica.Resume()
	s.WaitMaster(ctx, replica)
	// The next term, in another process, loads the store from the promoted
	// replica (the old leader may have lost its term in the failover already).
	leader.stop()
	live := slices.DeleteFunc(slices.Clone(ps), func(p *haProcess) bool { return p == leader })

	w.waitRewardedTwice(second)
	calls := w.rewardCalls()
	for _, v := range first {
		assert.Equal(t, 1, calls[v], "a vote whose mark was replicated was rewarded again: %s", v)
	}
	for _, v := range second {
		assert.Equal(t, 2, calls[v], "beyond the bound: %s", v)
		ts := w.rewardTokens(v)
		assert.Greater(t, ts[1], ts[0], "the second reward of %s is by an older term", v)
	}
	assert.Len(t, calls, len(first)+len(second))
	afterMark := w.tokens()
	require.Greater(t, len(afterMark), len(before))
	for _, tok := range afterMark[len(before):] {
		assert.Greater(t, tok, before[len(before)-1])
	}
	waitLoaded(t, ctx, live[0].state, len(first)+len(second))

	// The second failover, right after an election.
	master.Restart() // the sentinels make it a replica of the promoted one
	waitInSync(t, ctx, s.Client(t))
	require.Eventually(t, func() bool { return len(haLeaders(live...)) == 1 }, haWait, haTick)
	second2 := haLeaders(live...)[0]
	n := len(w.tokens())
	second2.stop()
	live = slices.DeleteFunc(live, func(p *haProcess) bool { return p == second2 })
	require.Eventually(t, func() bool { return len(w.tokens()) > n }, haWait, time.Millisecond, "no election")
	elected := w.tokens()[n]
	_, _ = s.KillMaster(ctx) // right after the election
	third := w.addVotes(8, 3)
	w.waitRewarded(third, "the votes after the second failover were never rewarded")
	waitLoaded(t, ctx, live[0].state, len(first)+len(second)+len(third))

	all := w.tokens()
	assertIncreasing(t, all)
	for _, v := range third {
		assert.Equal(t, 1, w.rewardCalls()[v], "a vote after the second failover rewarded twice: %s", v)
		for _, tok := range w.rewardTokens(v) {
			assert.GreaterOrEqual(t, tok, elected, "rewarded by a term older than the last election")
		}
	}
	assert.Eventually(t, func() bool { return len(haLeaders(live...)) == 1 }, haWait, haTick,
		"not one leader after the failovers")
	for _, total := range w.postedTotals() {
		assert.Equal(t, shards*perShard, total, "a partial or wrong total was posted")
	}
	assert.NotEmpty(t, w.postedTotals())
}

// waitLoaded waits until s holds n votes and none is pending (the
// marks follow the handlers' returns).
func waitLoaded(t *testing.T, ctx context.Context, s *State, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		snap, err := s.Load(ctx)
		return err == nil && len(snap.Pending) == 0 && len(snap.Seen) == n
	}, haWait, haTick, "a vote was lost by the store, or is left undelivered")
}

// waitInSync waits until the master c talks to (through Sentinel: whichever
// node is master now) has one replica online.
func waitInSync(t *testing.T, ctx context.Context, c *redis.Client) {
	t.Helper()
	require.Eventually(t, func() bool {
		info, err := c.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "role:master") && strings.Contains(info, "state=online")
	}, haWait, haTick, "the restarted node never caught up as a replica")
}

// waitRewardedTwice waits until each of voters was rewarded twice.
func (w *haWorld) waitRewardedTwice(voters []string) {
	w.t.Helper()
	require.Eventually(w.t, func() bool {
		calls := w.rewardCalls()
		for _, v := range voters {
			if calls[v] < 2 {
				return false
			}
		}
		return true
	}, haWait, haTick, "the votes whose marks the failover lost were not rewarded again")
}
