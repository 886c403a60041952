package redisstate

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
)

// clusterURL is the fleet's URL of cl: every node as a seed.
func clusterURL(cl *redistest.Cluster) string {
	a := cl.Addrs()
	return "redis+cluster://" + a[0] + "?addr=" + strings.Join(a[1:], "&addr=")
}

// TestClusterFleetSurvivesAMasterFailover runs a 6-shard bot as three
// processes (two shards each) on a Redis Cluster of three masters and three
// replicas. The leader posts the exact total and rewards every vote once;
// then the master of the bot's slot is killed and its replica promoted, the
// leader process stops (so the next term is elected on the promoted
// replica), a guild joins and more votes come: the new leader's token is
// above every earlier one, every vote is rewarded exactly once, every post
// is an exact total, and one process leads.
//
// Every write is replicated before the kill (WAIT on the master), so the
// failover undoes nothing here: what it may undo, and the bound on the
// duplicates that follow, is TestSentinelFleetLosesNoVoteAcrossFailovers's
// subject.
func TestClusterFleetSurvivesAMasterFailover(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	const shards, perShard = 6, 2
	w := newHAWorld(t, clusterURL(cl), shards, perShard)
	ps := []*haProcess{w.start(0, 0, 1), w.start(1, 2, 3), w.start(2, 4, 5)}

	first := w.addVotes(0, 10)
	w.waitRewarded(first, "the first votes were never rewarded")
	require.Eventually(t, func() bool { return slices.Contains(w.postedTotals(), shards*perShard) },
		haWait, haTick, "the exact total was never posted")
	require.Eventually(t, func() bool { return len(haLeaders(ps...)) == 1 }, haWait, haTick)
	leader := haLeaders(ps...)[0]

	master, err := cl.MasterOf(ctx, fleet.Key(haBot, "lease"))
	require.NoError(t, err)
	mc := master.Client(t)
	require.Eventually(t, func() bool { return mc.HLen(ctx, fleet.Key(haBot, "votes:pending")).Val() == 0 },
		haWait, haTick, "the delivered marks never reached the master")
	require.NoError(t, mc.Set(ctx, fleet.Key(haBot, "barrier"), "1", 0).Err())
	require.Equal(t, int64(1), mc.Wait(ctx, 1, 5*time.Second).Val(), "the replica did not catch up")
	before := w.tokens()

	killed, promoted := cl.KillMasterOf(ctx, fleet.Key(haBot, "lease"))
	require.Equal(t, master, killed)
	leader.stop()
	// The join lands on a shard of a process still running: a stopped
	// process publishes no more, so a join on its shards is never counted.
	var live []*haProcess
	for _, p := range ps {
		if p != leader {
			live = append(live, p)
		}
	}
	require.NoError(t, w.dc.Join(ctx, discordtest.GuildIDForShard(perShard, live[0].sessions[0].ShardID, shards)))
	second := w.addVotes(10, 10)
	w.waitRewarded(second, "the votes after the failover were never rewarded")
	require.Eventually(t, func() bool { return slices.Contains(w.postedTotals(), shards*perShard+1) },
		haWait, haTick, "the join was never posted")

	after := w.tokens()
	require.Greater(t, len(after), len(before), "no term after the failover")
	assertIncreasing(t, after)
	for _, tok := range after[len(before):] {
		assert.Greater(t, tok, before[len(before)-1], "a token repeated or went back across the failover")
	}
	counter, err := promoted.Client(t).Get(ctx, fleet.Key(haBot, "fence")).Int64()
	require.NoError(t, err, "the promoted replica serves the counter")
	assert.Equal(t, after[len(after)-1], counter)
	for v, n := range w.rewardCalls() {
		assert.Equal(t, 1, n, "vote of %s rewarded %d times", v, n)
	}
	assert.Len(t, w.rewardCalls(), len(first)+len(second))
	totals := w.postedTotals()
	for _, n := range totals {
		assert.Contains(t, []int{shards * perShard, shards*perShard + 1}, n, "a partial or wrong total was posted: %v", totals)
	}
	assert.True(t, slices.IsSorted(totals), "a total went back: %v", totals)
	assert.Eventually(t, func() bool { return len(haLeaders(live...)) == 1 }, haWait, haTick,
		"not one leader after the failover")
}
