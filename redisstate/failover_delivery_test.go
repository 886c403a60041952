package redisstate

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

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
	f, err := fleet.New(rdb, fleet.Config{Bot: haBot, ShardCount: 1, LeaseTTL: haTTL, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	state, err := New(rdb, haBot)
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
		case <-time.After(haWait):
			t.Error("the fleet process did not stop")
		}
		assert.NoError(t, rdb.Close())
		// go-redis redials a dead node from a goroutine that sees the Close
		// only after its 1 s pause: wait for it, for the leak check.
		assert.Eventually(t, func() bool {
			buf := make([]byte, 1<<20)
			return !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("ConnPool).tryDial"))
		}, haWait, haTick, "go-redis still redials after Close")
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
	require.Eventually(t, func() bool { return d.rewarded() >= fdKillAfter }, haWait, haTick, "no delivery before the kill")
	killMaster(func() { d.killed.Store(true) })
}

// check waits until every vote was rewarded, then checks the bound: a vote
// is rewarded at most twice, and the duplicates the kill's term started
// after the kill (calls it could not record) are no more than Concurrency.
func (d *failoverDelivery) check(t *testing.T, killToken int64) {
	require.Eventually(t, func() bool { return d.rewarded() == fdVotes }, 2*haWait, haTick, "a vote was never rewarded")
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
		master, err := cl.MasterOf(ctx, fleet.Key(haBot, "lease"))
		require.NoError(t, err)
		killToken = d.lease.State().Token
		mark()
		master.Kill()
		cl.KillMasterOf(ctx, fleet.Key(haBot, "lease")) // waits for the promotion
	})
	d.check(t, killToken)
}
