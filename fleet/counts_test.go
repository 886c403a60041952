package fleet

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// process publishes its shards, as one process of the fleet would.
func publish(t *testing.T, c *shardCounts, shards ...shardReport) {
	t.Helper()
	require.NoError(t, c.publish(context.Background(), shards))
}

func TestTotalIsExactOnceEveryShardReported(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	// Three processes, six shards, separate clients.
	var procs []*shardCounts
	for range 3 {
		c, err := newShardCounts(srv.Client(t), "counts1", 6, countsConfig{})
		require.NoError(t, err)
		procs = append(procs, c)
	}
	publish(t, procs[0], shardReport{Shard: 0, Guilds: 10}, shardReport{Shard: 1, Guilds: 11})
	publish(t, procs[2], shardReport{Shard: 4, Guilds: 14}, shardReport{Shard: 5, Guilds: 15})

	tot, err := procs[1].total(ctx)
	require.NoError(t, err)
	assert.False(t, tot.Postable(), "shards 2 and 3 never reported")
	assert.Equal(t, []int{2, 3}, tot.Missing)
	assert.Equal(t, []int{10, 11, 0, 0, 14, 15}, tot.PerShard)

	publish(t, procs[1], shardReport{Shard: 2, Guilds: 12}, shardReport{Shard: 3, Guilds: 0})
	tot, err = procs[0].total(ctx)
	require.NoError(t, err)
	require.True(t, tot.Postable(), "missing: %v", tot.Missing)
	assert.Equal(t, int64(10+11+12+0+14+15), tot.Servers)
	assert.Equal(t, 6, tot.ShardCount)
	assert.Equal(t, []int{10, 11, 12, 0, 14, 15}, tot.PerShard)
	assert.WithinDuration(t, time.Now(), tot.At, 5*time.Second)

	// A new count replaces the old one.
	publish(t, procs[0], shardReport{Shard: 0, Guilds: 100})
	tot, err = procs[2].total(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(100+11+12+0+14+15), tot.Servers)

	// Another shard count is another fleet layout: nothing of it is known yet.
	other, err := newShardCounts(srv.Client(t), "counts1", 8, countsConfig{})
	require.NoError(t, err)
	tot, err = other.total(ctx)
	require.NoError(t, err)
	assert.Len(t, tot.Missing, 8)
	assert.Zero(t, tot.Servers)
}

func TestStaleShardIsKeptWithinTheBoundAndDroppedAfter(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	c, err := newShardCounts(rdb, "counts2", 3, countsConfig{}) // MaxAge 1 h
	require.NoError(t, err)
	publish(t, c, shardReport{Shard: 0, Guilds: 5}, shardReport{Shard: 1, Guilds: 6}, shardReport{Shard: 2, Guilds: 7})

	// Shard 2's process stopped reporting 59 minutes ago (Redis's clock): still counted.
	now, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	age := func(ago time.Duration) {
		var rec [8]byte
		binary.BigEndian.PutUint32(rec[:], 7)
		binary.BigEndian.PutUint32(rec[4:], uint32(now.Add(-ago).Unix()))
		require.NoError(t, rdb.SetRange(ctx, Key("counts2", "counts:3"), 2*8, string(rec[:])).Err())
	}
	age(59 * time.Minute)
	tot, err := c.total(ctx)
	require.NoError(t, err)
	require.True(t, tot.Postable())
	assert.Equal(t, int64(18), tot.Servers)

	// 61 minutes: past the bound, the shard is missing and nothing is postable.
	age(61 * time.Minute)
	tot, err = c.total(ctx)
	require.NoError(t, err)
	assert.False(t, tot.Postable())
	assert.Equal(t, []int{2}, tot.Missing)
	assert.Equal(t, []int{5, 6, 0}, tot.PerShard)
}

func TestShardDroppedAfterItsProcessStopsReporting(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	cfg := countsConfig{MaxAge: time.Second}
	alive, err := newShardCounts(srv.Client(t), "counts3", 2, cfg)
	require.NoError(t, err)
	gone, err := newShardCounts(srv.Client(t), "counts3", 2, cfg)
	require.NoError(t, err)
	publish(t, gone, shardReport{Shard: 1, Guilds: 9})
	publish(t, alive, shardReport{Shard: 0, Guilds: 4})
	tot, err := alive.total(ctx)
	require.NoError(t, err)
	require.True(t, tot.Postable())
	require.Equal(t, int64(13), tot.Servers)

	// Only shard 0 keeps reporting; shard 1 drops out once past MaxAge.
	require.Eventually(t, func() bool {
		publish(t, alive, shardReport{Shard: 0, Guilds: 4})
		tot, err = alive.total(ctx)
		return err == nil && len(tot.Missing) == 1 && tot.Missing[0] == 1
	}, 5*time.Second, 50*time.Millisecond)
	assert.False(t, tot.Postable())
	assert.Equal(t, int64(4), tot.Servers)
}

func TestCountsMisuse(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	_, err := newShardCounts(nil, "b", 1, countsConfig{})
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	_, err = newShardCounts(srv.Client(t), "b", 0, countsConfig{})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	_, err = newShardCounts(srv.Client(t), "b", 1, countsConfig{MaxAge: time.Millisecond})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	c, err := newShardCounts(srv.Client(t), "b", 2, countsConfig{})
	require.NoError(t, err)
	require.ErrorAs(t, c.publish(ctx, []shardReport{{Shard: 0, Guilds: 1}, {Shard: 2, Guilds: 1}}), new(*topgg.ConfigError))
	require.ErrorAs(t, c.publish(ctx, []shardReport{{Shard: 0, Guilds: -1}}), new(*topgg.ConfigError))
	tot, err := c.total(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, tot.Missing, "a refused publish writes nothing")
	require.NoError(t, c.publish(ctx, nil))

	assert.False(t, fleetTotal{}.Postable())
}

func TestCountsReturnErrorsWhenRedisIsDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c, err := newShardCounts(newClient(t, srv.Addr()), "down", 2, countsConfig{})
	require.NoError(t, err)
	srv.Kill()
	ctx := context.Background()
	require.Error(t, c.publish(ctx, []shardReport{{Shard: 0, Guilds: 1}}))
	_, err = c.total(ctx)
	require.Error(t, err)
	srv.Restart()
	require.NoError(t, c.publish(ctx, []shardReport{{Shard: 0, Guilds: 1}, {Shard: 1, Guilds: 2}}))
	tot, err := c.total(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), tot.Servers)
}

// TestCountStampedInTheFutureIsMissing plants, in a real Redis, a shard
// record stamped an hour ahead of Redis's clock with 4,000,000,000 guilds
// (what a damaged key, or Redis's clock stepping back, leaves): the leader
// must not post it as exact, and says so once, not at every read. A stamp
// within futureSlack still counts; the shard's own next publish repairs it.
func TestCountStampedInTheFutureIsMissing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	var logs testlog.Buffer
	c, err := newShardCounts(rdb, "future", 3, countsConfig{Logger: logs.Logger()})
	require.NoError(t, err)
	publish(t, c, shardReport{Shard: 0, Guilds: 3}, shardReport{Shard: 1, Guilds: 4})
	now, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	plant := func(guilds uint32, at time.Time) {
		var rec [8]byte
		binary.BigEndian.PutUint32(rec[:], guilds)
		binary.BigEndian.PutUint32(rec[4:], uint32(at.Unix()))
		require.NoError(t, rdb.SetRange(ctx, Key("future", "counts:3"), 2*8, string(rec[:])).Err())
	}

	plant(4_000_000_000, now.Add(time.Hour))
	for range 3 {
		tot, err := c.total(ctx)
		require.NoError(t, err)
		assert.False(t, tot.Postable(), "a report from the future counted: %d servers", tot.Servers)
		assert.Equal(t, []int{2}, tot.Missing)
		assert.Equal(t, int64(7), tot.Servers)
		assert.Equal(t, []int{3, 4, 0}, tot.PerShard)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "stamped ahead"), "logged once, not per read:\n%s", logs.String())
	assert.Contains(t, logs.String(), "shards=[2]")

	// Within the slack (a clock a moment apart): counted.
	plant(5, now.Add(futureSlack/2))
	tot, err := c.total(ctx)
	require.NoError(t, err)
	require.True(t, tot.Postable(), "missing %v", tot.Missing)
	assert.Equal(t, int64(12), tot.Servers)

	// A new episode is logged again; the shard's own publish repairs it.
	plant(4_000_000_000, now.Add(24*time.Hour))
	tot, err = c.total(ctx)
	require.NoError(t, err)
	assert.False(t, tot.Postable())
	assert.Equal(t, 2, strings.Count(logs.String(), "stamped ahead"))
	publish(t, c, shardReport{Shard: 2, Guilds: 5})
	tot, err = c.total(ctx)
	require.NoError(t, err)
	require.True(t, tot.Postable())
	assert.Equal(t, int64(12), tot.Servers)
}

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
	cfg := leaseConfig{TTL: time.Second}
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

func TestReporterPublishesAtOnceAndEveryPeriodAndSurvivesRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	counts, err := newShardCounts(newClient(t, srv.Addr()), "rep", 2, countsConfig{})
	require.NoError(t, err)
	var guilds atomic.Int64
	guilds.Store(7)
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	var logs testlog.Buffer
	rep, err := newReporter(counts, func() []shardReport {
		return []shardReport{{Shard: 0, Guilds: int(guilds.Load())}, {Shard: 1, Guilds: 1}}
	}, WithReporterClock(reporterConfig{Every: time.Minute, Logger: logs.Logger()}, fake))
	require.NoError(t, err)

	stop := runReporter(t, rep)
	total := func() int64 { return postedServers(ctx, counts) }
	require.Eventually(t, func() bool { return total() == 8 }, 5*time.Second, 5*time.Millisecond, "no publish at start")
	require.ErrorIs(t, rep.run(ctx), topgg.ErrRunning)

	guilds.Store(70)
	require.Eventually(t, func() bool { return fake.Timers() == 1 }, 5*time.Second, time.Millisecond)
	fake.Advance(time.Minute)
	require.Eventually(t, func() bool { return total() == 71 }, 5*time.Second, 5*time.Millisecond, "no publish after a period")

	srv.Kill()
	require.Eventually(t, func() bool { return fake.Timers() == 1 }, 5*time.Second, time.Millisecond)
	fake.Advance(time.Minute)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "publishing shard counts failed") },
		5*time.Second, time.Millisecond)

	srv.Restart()
	guilds.Store(700)
	require.Eventually(t, func() bool {
		if fake.Timers() == 1 {
			fake.Advance(time.Minute)
		}
		return total() == 701
	}, 10*time.Second, 10*time.Millisecond, "publishing did not resume after Redis came back")

	require.NoError(t, stop())
}

// evalCounter is a go-redis hook counting the scripts a client sends (a
// publish is one EVAL): the round trips the reporter makes.
type evalCounter struct{ n atomic.Int64 }

func (e *evalCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (e *evalCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "eval" {
			e.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (e *evalCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// signal is a change broadcast like autopost.Counter.Changed: the channel
// the next fire closes.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// timerLog is a fake clock that remembers the duration of the last timer
// asked for, so that a test knows which wait the code under test is in.
type timerLog struct {
	*clock.Fake
	last atomic.Int64
}

func (c *timerLog) NewTimer(d time.Duration) clock.Timer {
	c.last.Store(int64(d))
	return c.Fake.NewTimer(d)
}

// waitingFor reports whether the code waits on one timer, of d.
func (c *timerLog) waitingFor(d time.Duration) bool {
	return c.Timers() == 1 && time.Duration(c.last.Load()) == d
}

// TestReporterCoalescesChanges: a change is published without waiting for
// the period, but no sooner than 250 ms after the publish before it, and the
// changes of those 250 ms go out in one publish of the newest counts.
func TestReporterCoalescesChanges(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := newClient(t, srv.Addr())
	evals := &evalCounter{}
	rdb.AddHook(evals)
	counts, err := newShardCounts(rdb, "coalesce", 1, countsConfig{})
	require.NoError(t, err)
	var guilds atomic.Int64
	var sig signal
	fake := &timerLog{Fake: clock.NewFake(time.Unix(1_700_000_000, 0))}
	runReporter(t, oneShardReporter(t, counts, &guilds, &sig, reporterConfig{}, fake))
	total := func() int64 { return postedServers(ctx, counts) }
	require.Eventually(t, func() bool { return total() == 0 && fake.waitingFor(time.Hour) }, 5*time.Second, time.Millisecond,
		"no publish at start")
	require.EqualValues(t, 1, evals.n.Load())

	// A storm of 100 joins within the gap after the first publish: one
	// publish, once the gap has passed, with all of them.
	for range 100 {
		guilds.Add(1)
		sig.fire()
	}
	require.Eventually(t, func() bool { return fake.waitingFor(minPublishGap) }, 5*time.Second, time.Millisecond,
		"a change did not end the period's wait")
	fake.Advance(minPublishGap - time.Millisecond)
	assert.EqualValues(t, 1, evals.n.Load(), "published sooner than the gap")
	fake.Advance(time.Millisecond)
	require.Eventually(t, func() bool { return total() == 100 }, 5*time.Second, time.Millisecond,
		"the coalesced publish never came")
	assert.EqualValues(t, 2, evals.n.Load(), "100 changes, one publish")

	// Long after the last publish, a change goes out at once.
	require.Eventually(t, func() bool { return fake.waitingFor(time.Hour) }, 5*time.Second, time.Millisecond)
	fake.Advance(time.Second)
	guilds.Add(1)
	sig.fire()
	require.Eventually(t, func() bool { return total() == 101 }, 5*time.Second, time.Millisecond,
		"a lone change waited")
	assert.EqualValues(t, 3, evals.n.Load())
}

// TestReporterPublishesAPendingChangeWhenStopped: a change not yet
// published (inside the gap) when the reporter is stopped is published
// before Run returns, so that a process that stops (a leader handing over)
// leaves its newest counts, which the next leader's total needs.
func TestReporterPublishesAPendingChangeWhenStopped(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	counts, err := newShardCounts(newClient(t, srv.Addr()), "stopping", 1, countsConfig{})
	require.NoError(t, err)
	for _, inGap := range []bool{true, false} {
		var guilds atomic.Int64
		var sig signal
		fake := &timerLog{Fake: clock.NewFake(time.Unix(1_700_000_000, 0))}
		stop := runReporter(t, oneShardReporter(t, counts, &guilds, &sig, reporterConfig{}, fake))
		require.Eventually(t, func() bool { return fake.waitingFor(time.Hour) }, 5*time.Second, time.Millisecond)
		guilds.Store(7)
		if inGap {
			sig.fire()
			require.Eventually(t, func() bool { return fake.waitingFor(minPublishGap) }, 5*time.Second, time.Millisecond)
		}
		require.NoError(t, stop())
		tot, err := counts.total(ctx)
		require.NoError(t, err)
		if inGap {
			assert.EqualValues(t, 7, tot.Servers, "the pending change was not published on stop")
		} else {
			assert.EqualValues(t, 0, tot.Servers, "published on stop without a change")
		}
	}
}

// TestReporterRetriesWithinASecond: a change made while Redis is down is
// published within a second of its return, not a period later.
func TestReporterRetriesWithinASecond(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	counts, err := newShardCounts(newClient(t, srv.Addr()), "retry", 1, countsConfig{})
	require.NoError(t, err)
	var guilds atomic.Int64
	var sig signal
	var logs testlog.Buffer
	fake := &timerLog{Fake: clock.NewFake(time.Unix(1_700_000_000, 0))}
	runReporter(t, oneShardReporter(t, counts, &guilds, &sig, reporterConfig{Logger: logs.Logger()}, fake))
	require.Eventually(t, func() bool { return fake.waitingFor(time.Hour) }, 5*time.Second, time.Millisecond)

	srv.Kill()
	guilds.Store(3)
	sig.fire()
	require.Eventually(t, func() bool { return fake.waitingFor(minPublishGap) }, 5*time.Second, time.Millisecond)
	fake.Advance(minPublishGap)
	require.Eventually(t, func() bool {
		d := time.Duration(fake.last.Load())
		return fake.Timers() == 1 && d > 0 && d <= maxRetry
	}, 10*time.Second, time.Millisecond, "a failed publish is not retried within a second")
	srv.Restart()
	require.Eventually(t, func() bool {
		if fake.Timers() == 1 {
			fake.Advance(maxRetry)
		}
		tot, err := counts.total(ctx)
		return err == nil && tot.Servers == 3
	}, 10*time.Second, 10*time.Millisecond, "the change was not published after Redis came back")
}

// fleetProcess is one simulated process: its own Redis client, its own
// Counter of its own shards' sessions, and a reporter publishing them.
type fleetProcess struct {
	counter  *autopost.Counter
	counts   *shardCounts
	sessions []*discordgo.Session
}

// startProcess attaches sessions for shards to a new Counter and runs a
// reporter for it until the test ends. The sessions are not opened.
func startProcess(t *testing.T, addr string, dc *discordtest.Server, shardCount int, shards ...int) *fleetProcess {
	t.Helper()
	p := &fleetProcess{counter: autopost.NewCounter(shardCount)}
	var err error
	p.counts, err = newShardCounts(newClient(t, addr), "bot", shardCount, countsConfig{})
	require.NoError(t, err)
	for _, id := range shards {
		s, err := dc.NewSession(id, shardCount)
		require.NoError(t, err)
		p.sessions = append(p.sessions, s)
	}
	_, err = p.counter.Attach(p.sessions...)
	require.NoError(t, err)
	// A period of an hour: the shards must be published when they get READY.
	rep, err := newCounterReporter(p.counts, p.counter, reporterConfig{Every: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rep.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		httpx.Within("the reporter's Run to return", func() { assert.NoError(t, <-done) })
		var wg sync.WaitGroup
		for _, s := range p.sessions {
			wg.Go(func() { _ = s.Close() })
		}
		httpx.Within("the sessions' Close", wg.Wait)
	})
	return p
}

func (p *fleetProcess) open(t *testing.T) {
	t.Helper()
	for _, s := range p.sessions {
		require.NoError(t, s.Open())
	}
}

// TestLeaderPosterPostsTheFleetTotal runs two processes of a 4-shard bot
// (shards 0-1 and 2-3, 3 and 5 guilds per shard) that publish their
// Counters, and the first one's Poster on the fleet totalSource: nothing is
// posted while the second process's shards have not reported, then the exact
// total with shard_count 4.
func TestLeaderPosterPostsTheFleetTotal(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const shardCount = 4
	dc := testkit.Discord(t, []int{3, 3, 5, 5})
	tg, client := testkit.Service(t)

	a := startProcess(t, srv.Addr(), dc, shardCount, 0, 1)
	b := startProcess(t, srv.Addr(), dc, shardCount, 2, 3)
	src, err := newTotalSource(a.counts, a.counter)
	require.NoError(t, err)
	poster, err := autopost.New(client, autopost.Config{Source: src, Interval: 1600 * time.Millisecond}) // rechecks every 100 ms
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- poster.Run(ctx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })

	a.open(t)
	require.Eventually(t, func() bool {
		c, err := src.Counts(ctx)
		return err == nil && c.Servers == 6 && assert.ObjectsAreEqual([]int{2, 3}, c.Missing)
	}, 5*time.Second, 5*time.Millisecond, "process a's shards never published")
	c, err := src.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, shardCount, c.Shards)
	assert.Equal(t, []int{3, 3, 0, 0}, c.PerShard)
	assert.Equal(t, dc.BotUserID(), c.BotID)
	assert.Empty(t, tg.Metrics(), "posted a partial total")

	b.open(t)
	require.Eventually(t, func() bool { return len(tg.Metrics()) > 0 }, 10*time.Second, 5*time.Millisecond,
		"the fleet total was never posted")
	m := tg.Metrics()[0]
	assert.Equal(t, map[string]int{"server_count": 16, "shard_count": shardCount}, m.Metrics)
	c, err = src.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 3, 5, 5}, c.PerShard)
	assert.Empty(t, c.Missing)
}

func TestSourceAndCounterReporterMisuse(t *testing.T) {
	t.Parallel()
	counts, err := newShardCounts(newClient(t, "127.0.0.1:1"), "bot", 1, countsConfig{})
	require.NoError(t, err)
	_, err = newTotalSource(counts, nil)
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	_, err = newCounterReporter(counts, nil, reporterConfig{})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
}

// TestPrintingTheFleetWhileItCountsIsSafe: fmt of the count source
// Fleet.Counts returns walked its *autopost.Counter unlocked while sessions
// were attached (a data race, under -race); the Fleet and its Lease print by
// name too, showing no token.
func TestPrintingTheFleetWhileItCountsIsSafe(t *testing.T) {
	t.Parallel()
	f, err := New(newClient(t, "127.0.0.1:1"), Config{Bot: "bot", ShardCount: 2})
	require.NoError(t, err)
	counter := autopost.NewCounter(2)
	total, _, err := f.Counts(counter)
	require.NoError(t, err)
	const token = "Bot c2VjcmV0LXRva2Vu.printed"
	out := testlog.PrintWhile(func() {
		for range 200 {
			s, err := discordgo.New(token)
			if !assert.NoError(t, err) {
				return
			}
			s.ShardID, s.ShardCount, s.Identify.Intents = 1, 2, discordgo.IntentsGuilds
			detach, err := counter.Attach(s)
			if assert.NoError(t, err) {
				detach()
			}
		}
	}, total, f, f.Lease())
	assert.NotContains(t, out, "c2VjcmV0LXRva2Vu")
	assert.Contains(t, out, "fleet.Counts(total)")
}
