package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// freshFleet is a 4-shard bot (3, 3, 5 and 5 guilds) on a fake Discord and
// a fake Top.gg, with two processes (shards 0-1 and 2-3) whose reporters
// publish on changes only (their period is an hour).
type freshFleet struct {
	srv    *redistest.Server
	dc     *discordtest.Server
	tg     *topggtest.Server
	client *topgg.Client
	a, b   *fleetProcess
}

const freshShards = 4

func startFreshFleet(t *testing.T) *freshFleet {
	t.Helper()
	f := &freshFleet{srv: redistest.Start(t)}
	f.dc = testkit.Discord(t, []int{3, 3, 5, 5}) // freshShards shards
	var err error
	f.tg, err = topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(f.tg.Close)
	f.client, err = topgg.New(f.tg.Token(), topgg.WithBaseURL(f.tg.URL), topgg.WithHTTPClient(f.tg.Client()))
	require.NoError(t, err)
	f.a = startProcess(t, f.srv.Addr(), f.dc, freshShards, 0, 1)
	f.b = startProcess(t, f.srv.Addr(), f.dc, freshShards, 2, 3)
	return f
}

// poster returns a Poster of p's fleet total, posting every interval.
func (f *freshFleet) poster(t *testing.T, p *fleetProcess, interval time.Duration) *autopost.Poster {
	t.Helper()
	src, err := newTotalSource(p.counts, p.counter)
	require.NoError(t, err)
	poster, err := autopost.New(f.client, autopost.Config{Source: src, Interval: interval})
	require.NoError(t, err)
	return poster
}

// posted returns the server counts posted so far, in order.
func (f *freshFleet) posted() []int {
	var out []int
	for _, m := range f.tg.Metrics() {
		out = append(out, m.Metrics["server_count"])
	}
	return out
}

// TestJoinOnAFollowersShardIsInTheLeadersNextPost: a guild joining a shard
// of the process that does not post (and a leave, and an outage, which
// keeps the guild counted) is in the poster's next post, within 1 s plus the
// post interval, though no process publishes by its period.
func TestJoinOnAFollowersShardIsInTheLeadersNextPost(t *testing.T) {
	t.Parallel()
	f := startFreshFleet(t)
	const interval = 1500 * time.Millisecond
	poster := f.poster(t, f.a, interval)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- poster.Run(ctx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })
	f.a.open(t)
	f.b.open(t)
	require.Eventually(t, func() bool { return len(f.posted()) > 0 }, 10*time.Second, 5*time.Millisecond,
		"the fleet total was never posted")
	require.Equal(t, []int{16}, f.posted())

	joined := discordtest.GuildIDForShard(100, 2, freshShards)
	require.NoError(t, f.dc.Join(ctx, joined))
	require.Eventually(t, func() bool { return assert.ObjectsAreEqual([]int{16, 17}, f.posted()) },
		time.Second+interval, 5*time.Millisecond, "the join on shard 2 was not in the next post")

	require.NoError(t, f.dc.Outage(ctx, discordtest.GuildIDForShard(0, 3, freshShards)))
	require.NoError(t, f.dc.Remove(ctx, joined))
	require.Eventually(t, func() bool { return assert.ObjectsAreEqual([]int{16, 17, 16}, f.posted()) },
		time.Second+interval, 5*time.Millisecond, "the leave on shard 2 was not in the next post")
}

// TestTakeoverFirstPostIsTheCurrentTotal: each process runs its Poster while
// it leads. A guild joins a's shard (a publishes it) while a leads; then one
// joins b's shard and a stops at once (its lease released, as a shutdown
// does): b's first post is the total with both joins, its own taken from its
// Counter even if its publish has not landed yet.
func TestTakeoverFirstPostIsTheCurrentTotal(t *testing.T) {
	t.Parallel()
	f := startFreshFleet(t)
	const interval = 10 * time.Second // one post per term: the first
	leaderJob := func(p *fleetProcess) func(context.Context, int64) error {
		poster := f.poster(t, p, interval)
		return func(ctx context.Context, _ int64) error { return poster.Run(ctx) }
	}
	cfg := LeaseConfig{TTL: time.Second}
	la := startContender(t, f.srv.Addr(), "bot", cfg, leaderJob(f.a))
	require.Eventually(t, func() bool { return la.lease.State().Leader }, 5*time.Second, time.Millisecond)
	startContender(t, f.srv.Addr(), "bot", cfg, leaderJob(f.b))
	f.a.open(t)
	f.b.open(t)
	require.Eventually(t, func() bool { return len(f.posted()) > 0 }, 10*time.Second, 5*time.Millisecond,
		"the leader never posted")
	require.Equal(t, []int{16}, f.posted())

	ctx := context.Background()
	require.NoError(t, f.dc.Join(ctx, discordtest.GuildIDForShard(100, 0, freshShards)))
	require.Eventually(t, func() bool {
		tot, err := f.b.counts.total(ctx)
		return err == nil && tot.Servers == 17
	}, 5*time.Second, time.Millisecond, "a never published its join")
	require.NoError(t, f.dc.Join(ctx, discordtest.GuildIDForShard(100, 3, freshShards)))
	require.Eventually(t, func() bool {
		c, err := f.b.counter.Counts(ctx)
		return err == nil && c.Servers == 11
	}, 5*time.Second, time.Millisecond, "b's session never saw its join")
	require.NoError(t, la.stopAndWait(t))
	require.Eventually(t, func() bool { return len(f.posted()) > 1 }, 10*time.Second, 5*time.Millisecond,
		"the new leader never posted")
	assert.Equal(t, []int{16, 18}, f.posted(), "the new leader's first post is not the current total")
}

// TestLeaderTotalTakesItsOwnShardsFromItsCounter: the total a process posts
// counts its own ready shards as its Counter has them now, not as it last
// published them (a join a moment before a post, not yet published), and
// the other shards as Redis has them.
func TestLeaderTotalTakesItsOwnShardsFromItsCounter(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	var guilds []string
	for i := range 3 {
		guilds = append(guilds, discordtest.GuildIDForShard(i, 0, 2))
	}
	dc, err := discordtest.NewServer(discordtest.WithShardCount(2), discordtest.WithGuilds(guilds...))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	counts, err := newShardCounts(newClient(t, srv.Addr()), "overlay", 2, countsConfig{})
	require.NoError(t, err)
	counter := autopost.NewCounter(2)
	s, err := dc.NewSession(0, 2)
	require.NoError(t, err)
	_, err = counter.Attach(s)
	require.NoError(t, err)
	require.NoError(t, s.Open())
	t.Cleanup(func() { _ = s.Close() })
	src, err := newTotalSource(counts, counter)
	require.NoError(t, err)

	require.NoError(t, counts.publish(ctx, []shardReport{{Shard: 1, Guilds: 5}}))
	require.Eventually(t, func() bool {
		c, err := src.Counts(ctx)
		return err == nil && c.Complete() && c.Servers == 8
	}, 5*time.Second, time.Millisecond, "shard 0 (local, never published) is not in the total")
	require.NoError(t, counts.publish(ctx, []shardReport{{Shard: 0, Guilds: 1}})) // stale
	require.NoError(t, dc.Join(ctx, discordtest.GuildIDForShard(50, 0, 2)))
	require.Eventually(t, func() bool {
		c, err := src.Counts(ctx)
		return err == nil && c.Servers == 9 && assert.ObjectsAreEqual([]int{4, 5}, c.PerShard)
	}, 5*time.Second, time.Millisecond, "the local join is not in the total")
	c, err := src.Counts(ctx)
	require.NoError(t, err)
	assert.Empty(t, c.Missing)
	assert.Equal(t, 2, c.Shards)
}
