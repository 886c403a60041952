package redisstate

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
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
		redistest.HAWait, redistest.HATick, "the exact total was never posted")
	require.Eventually(t, func() bool { return len(haLeaders(ps...)) == 1 }, redistest.HAWait, redistest.HATick)
	leader := haLeaders(ps...)[0]

	master, err := cl.MasterOf(ctx, fleet.Key(redistest.HABot, "lease"))
	require.NoError(t, err)
	mc := master.Client(t)
	require.Eventually(t, func() bool { return mc.HLen(ctx, fleet.Key(redistest.HABot, "votes:pending")).Val() == 0 },
		redistest.HAWait, redistest.HATick, "the delivered marks never reached the master")
	require.NoError(t, mc.Set(ctx, fleet.Key(redistest.HABot, "barrier"), "1", 0).Err())
	require.Equal(t, int64(1), mc.Wait(ctx, 1, 5*time.Second).Val(), "the replica did not catch up")
	before := w.tokens()

	killed, promoted := cl.KillMasterOf(ctx, fleet.Key(redistest.HABot, "lease"))
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
		redistest.HAWait, redistest.HATick, "the join was never posted")

	after := w.tokens()
	require.Greater(t, len(after), len(before), "no term after the failover")
	redistest.AssertIncreasing(t, after)
	for _, tok := range after[len(before):] {
		assert.Greater(t, tok, before[len(before)-1], "a token repeated or went back across the failover")
	}
	counter, err := promoted.Client(t).Get(ctx, fleet.Key(redistest.HABot, "fence")).Int64()
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
	assert.Eventually(t, func() bool { return len(haLeaders(live...)) == 1 }, redistest.HAWait, redistest.HATick,
		"not one leader after the failover")
}

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
		redistest.HAWait, redistest.HATick, "the exact total was never posted")
	master, err := s.Master(ctx)
	require.NoError(t, err)
	replica := s.Other(master)
	mc := master.Client(t)
	require.Eventually(t, func() bool { return mc.HLen(ctx, fleet.Key(redistest.HABot, "votes:pending")).Val() == 0 },
		redistest.HAWait, redistest.HATick, "the first delivered marks never reached the master")
	require.NoError(t, mc.Set(ctx, fleet.Key(redistest.HABot, "barrier"), "1", 0).Err())
	require.Equal(t, int64(1), mc.Wait(ctx, 1, 5*time.Second).Val(), "the replica did not catch up")
	require.Eventually(t, func() bool { return len(haLeaders(ps...)) == 1 }, redistest.HAWait, redistest.HATick)
	leader := haLeaders(ps...)[0]

	replica.Pause()
	require.NoError(t, mc.ClientKillByFilter(ctx, "TYPE", "replica").Err())
	second := w.addVotes(5, 3)
	w.waitRewarded(second, "the leader did not reward the votes while the replica was cut off")
	require.Eventually(t, func() bool { return mc.HLen(ctx, fleet.Key(redistest.HABot, "votes:pending")).Val() == 0 },
		redistest.HAWait, redistest.HATick, "the delivered marks never reached the master")
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
	require.Eventually(t, func() bool { return len(haLeaders(live...)) == 1 }, redistest.HAWait, redistest.HATick)
	second2 := haLeaders(live...)[0]
	n := len(w.tokens())
	second2.stop()
	live = slices.DeleteFunc(live, func(p *haProcess) bool { return p == second2 })
	require.Eventually(t, func() bool { return len(w.tokens()) > n }, redistest.HAWait, time.Millisecond, "no election")
	elected := w.tokens()[n]
	_, _ = s.KillMaster(ctx) // right after the election
	third := w.addVotes(8, 3)
	w.waitRewarded(third, "the votes after the second failover were never rewarded")
	waitLoaded(t, ctx, live[0].state, len(first)+len(second)+len(third))

	all := w.tokens()
	redistest.AssertIncreasing(t, all)
	for _, v := range third {
		assert.Equal(t, 1, w.rewardCalls()[v], "a vote after the second failover rewarded twice: %s", v)
		for _, tok := range w.rewardTokens(v) {
			assert.GreaterOrEqual(t, tok, elected, "rewarded by a term older than the last election")
		}
	}
	assert.Eventually(t, func() bool { return len(haLeaders(live...)) == 1 }, redistest.HAWait, redistest.HATick,
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
	}, redistest.HAWait, redistest.HATick, "a vote was lost by the store, or is left undelivered")
}

// waitInSync waits until the master c talks to (through Sentinel: whichever
// node is master now) has one replica online.
func waitInSync(t *testing.T, ctx context.Context, c *redis.Client) {
	t.Helper()
	require.Eventually(t, func() bool {
		info, err := c.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "role:master") && strings.Contains(info, "state=online")
	}, redistest.HAWait, redistest.HATick, "the restarted node never caught up as a replica")
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
	}, redistest.HAWait, redistest.HATick, "the votes whose marks the failover lost were not rewarded again")
}

// Delivery under a failover: many votes, rewarded slowly enough that the
// master dies with calls in flight.
const (
	fdVotes       = 300
	fdConcurrency = 4
	fdKillAfter   = 30 // rewards before the kill
	// fdFailFast makes a write to a dead master fail at once, not after
	// go-redis's retries (seconds): what follows within the term is the leader's choice.
	fdFailFast = "&max_retries=-1"
)

// rewardCall is one reward call: by which term, and whether it started after the kill.
type rewardCall struct {
	token     int64
	afterKill bool
}

// failoverDelivery is one fleet process delivering fdVotes votes from the fake
// Top.gg through the Redis state at url, each term's Poller on the lease.
type failoverDelivery struct {
	mu     sync.Mutex
	calls  map[string][]rewardCall
	killed atomic.Bool
	lease  *fleet.Lease
}

func startFailoverDelivery(t *testing.T, url string) *failoverDelivery {
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	client, err := tg.NewClient()
	require.NoError(t, err)
	now := time.Now().UTC()
	for i := range fdVotes {
		tg.AddVote(topggtest.Vote{UserID: fmt.Sprintf("8%017d", i), PlatformID: fmt.Sprintf("3%017d", i), Weight: 1,
			CreatedAt: now.Add(-time.Hour + time.Duration(i)*time.Millisecond)})
	}
	rdb, err := fleet.NewUniversalClient(url)
	require.NoError(t, err)
	f, err := fleet.New(rdb, fleet.Config{Bot: redistest.HABot, ShardCount: 1, LeaseTTL: redistest.HATTL, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	state, err := New(rdb, redistest.HABot)
	require.NoError(t, err)
	require.NoError(t, state.UseFence(func() int64 { return f.Lease().State().Token }))
	d := &failoverDelivery{calls: map[string][]rewardCall{}, lease: f.Lease()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		assert.NoError(t, f.Lease().Run(ctx, func(lctx context.Context, token int64) error {
			p, err := voterewards.New(client, voterewards.Config{Store: state, Interval: haPollStep,
				Concurrency: fdConcurrency, MaxAttempts: 1, RetryDelay: 10 * time.Millisecond, GracePeriod: time.Second,
				Logger: slog.New(slog.DiscardHandler), OnReward: d.reward(token)})
			if err != nil {
				return err
			}
			return p.Run(lctx)
		}))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(redistest.HAWait):
			t.Error("the fleet process did not stop")
		}
		assert.NoError(t, rdb.Close())
		// go-redis redials a dead node from a goroutine that sees the Close
		// only after its 1 s pause: wait for it, for the leak check.
		assert.Eventually(t, func() bool {
			buf := make([]byte, 1<<20)
			return !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("ConnPool).tryDial"))
		}, redistest.HAWait, redistest.HATick, "go-redis still redials after Close")
	})
	return d
}

// reward is the reward handler of the term of token.
func (d *failoverDelivery) reward(token int64) voterewards.Handler {
	return func(_ context.Context, v voterewards.Vote) error {
		c := rewardCall{token: token, afterKill: d.killed.Load()}
		d.mu.Lock()
		d.calls[v.PlatformID] = append(d.calls[v.PlatformID], c)
		d.mu.Unlock()
		time.Sleep(5 * time.Millisecond) // the reward's own work (a Discord call): calls are in flight at the kill
		return nil
	}
}

func (d *failoverDelivery) rewarded() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.calls)
}

// kill runs killMaster mid-delivery; killMaster calls mark right before the
// kill, so that the calls that start after it are marked.
func (d *failoverDelivery) kill(t *testing.T, killMaster func(mark func())) {
	require.Eventually(t, func() bool { return d.rewarded() >= fdKillAfter }, redistest.HAWait, redistest.HATick, "no delivery before the kill")
	killMaster(func() { d.killed.Store(true) })
}

// check waits until every vote was rewarded, then checks the bound: a vote
// is rewarded at most twice, and the duplicates the kill's term started
// after the kill (calls it could not record) are no more than Concurrency.
func (d *failoverDelivery) check(t *testing.T, killToken int64) {
	require.Eventually(t, func() bool { return d.rewarded() == fdVotes }, 2*redistest.HAWait, redistest.HATick, "a vote was never rewarded")
	d.mu.Lock()
	defer d.mu.Unlock()
	late, twice := 0, 0
	for v, cs := range d.calls {
		assert.LessOrEqual(t, len(cs), 2, "vote of %s rewarded %d times", v, len(cs))
		if len(cs) > 1 {
			twice++
			if cs[0].token == killToken && cs[0].afterKill {
				late++
			}
		}
	}
	t.Logf("%d of %d votes rewarded twice, %d of them started after the kill", twice, fdVotes, late)
	assert.LessOrEqual(t, late, fdConcurrency,
		"votes rewarded again because the leader started their rewards after its store failed (%d rewarded twice)", twice)
}

// TestSentinelLeaderStartsNoRewardAfterTheMasterDies: the Sentinel master
// is killed (by PID) with rewards in flight. The leader starts no reward
// once its writes fail: the votes rewarded again after the failover are
// those in flight at the kill (or whose marks the failover undid), not every
// reward of the rest of its term.
func TestSentinelLeaderStartsNoRewardAfterTheMasterDies(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	d := startFailoverDelivery(t, sentinelURL(s)+fdFailFast)
	var killToken int64
	d.kill(t, func(mark func()) {
		master, err := s.Master(ctx)
		require.NoError(t, err)
		killToken = d.lease.State().Token
		mark()
		master.Kill()
		s.WaitMaster(ctx, s.Other(master))
	})
	d.check(t, killToken)
}

// TestClusterLeaderStartsNoRewardAfterTheMasterDies is the Sentinel test on
// a Redis Cluster, the master of the bot's slot killed.
func TestClusterLeaderStartsNoRewardAfterTheMasterDies(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	d := startFailoverDelivery(t, clusterURL(cl)+fdFailFast)
	var killToken int64
	d.kill(t, func(mark func()) {
		master, err := cl.MasterOf(ctx, fleet.Key(redistest.HABot, "lease"))
		require.NoError(t, err)
		killToken = d.lease.State().Token
		mark()
		master.Kill()
		cl.KillMasterOf(ctx, fleet.Key(redistest.HABot, "lease")) // waits for the promotion
	})
	d.check(t, killToken)
}
