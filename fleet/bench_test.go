package fleet

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// roundTrips counts what a client sends to Redis (the kit's hook).
type roundTrips = redistest.RoundTrips

// simFleet is a fleet of procs processes sharing shards shards, each with its
// own client (its own connection pool), as separate processes would have.
type simFleet struct {
	procs  []*shardCounts
	rts    []*roundTrips
	shards [][]shardReport
	total  int64
}

func newSimFleet(tb testing.TB, addr, bot string, shards, procs int) *simFleet {
	f := &simFleet{}
	per := shards / procs
	for p := range procs {
		rdb := newClient(tb, addr)
		rt := &roundTrips{}
		rdb.AddHook(rt)
		c, err := newShardCounts(rdb, bot, shards, countsConfig{})
		require.NoError(tb, err)
		var mine []shardReport
		for s := p * per; s < (p+1)*per; s++ {
			g := 1000 + s%997
			mine = append(mine, shardReport{Shard: s, Guilds: g})
			f.total += int64(g)
		}
		f.procs, f.rts, f.shards = append(f.procs, c), append(f.rts, rt), append(f.shards, mine)
	}
	return f
}

// publishAll is one interval: every process publishes its shards at once.
func (f *simFleet) publishAll(tb testing.TB) {
	var wg sync.WaitGroup
	for i, c := range f.procs {
		wg.Go(func() { assert.NoError(tb, c.publish(context.Background(), f.shards[i])) })
	}
	wg.Wait()
}

func TestPublishAndTotalAreOneRoundTripEach(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	f := newSimFleet(t, srv.Addr(), "rt", 2000, 5)
	f.publishAll(t) // dials and warms the pools
	for _, rt := range f.rts {
		rt.N.Store(0)
	}
	f.publishAll(t)
	for i, rt := range f.rts {
		assert.Equal(t, int64(1), rt.N.Load(), "process %d: round trips for one publish of %d shards", i, len(f.shards[i]))
	}
	f.rts[0].N.Store(0)
	tot, err := f.procs[0].total(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1), f.rts[0].N.Load(), "round trips for one total")
	require.True(t, tot.Postable())
	assert.Equal(t, f.total, tot.Servers)
}

// BenchmarkFleet20000Shards50Processes measures, on a simulated fleet of
// 20,000 shards in 50 processes with separate clients:
//   - aggregate: the leader's fleetTotal per interval (goal <= 50 ms);
//   - publish: one interval of all 50 processes publishing at once, with the
//     round trips per process per publish (goal 1) and the Redis memory per
//     shard (goal <= 200 B) as metrics.
func BenchmarkFleet20000Shards50Processes(b *testing.B) {
	const shards, procs = 20000, 50
	srv := redistest.Start(b)
	f := newSimFleet(b, srv.Addr(), "bench", shards, procs)
	obs := srv.Client(b)
	ctx := context.Background()
	before := usedMemory(b, obs)
	f.publishAll(b)

	b.Run("aggregate", func(b *testing.B) {
		var tot fleetTotal
		for b.Loop() {
			var err error
			tot, err = f.procs[0].total(ctx)
			if err != nil {
				b.Fatal(err)
			}
		}
		if !tot.Postable() || tot.Servers != f.total {
			b.Fatalf("total %d (want %d), missing %d", tot.Servers, f.total, len(tot.Missing))
		}
	})
	b.Run("publish", func(b *testing.B) {
		for _, rt := range f.rts {
			rt.N.Store(0)
		}
		n := 0
		for b.Loop() {
			f.publishAll(b)
			n++
		}
		var sum int64
		for _, rt := range f.rts {
			sum += rt.N.Load()
		}
		b.ReportMetric(float64(sum)/float64(n*procs), "roundtrips/publish")
		key := Key("bench", "counts:"+strconv.Itoa(shards))
		usage, err := obs.MemoryUsage(ctx, key, 0).Result()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(usage)/shards, "key-B/shard")
		b.ReportMetric(float64(usedMemory(b, obs)-before)/shards, "used_memory-B/shard")
		b.ReportMetric(evalMicros(b, obs)/shards, "redis-us/shard/publish")
	})
}

// usedMemory reads used_memory from INFO memory.
func usedMemory(tb testing.TB, c *redis.Client) int64 {
	info, err := c.Info(context.Background(), "memory").Result()
	require.NoError(tb, err)
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(tb, err)
			return n
		}
	}
	tb.Fatal("no used_memory in INFO memory")
	return 0
}

// evalMicros reads Redis's own mean time per EVAL from INFO commandstats,
// divided back to the whole interval: the Redis CPU one interval of
// publishes costs (EVAL is used by the publishes only).
func evalMicros(tb testing.TB, c *redis.Client) float64 {
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(tb, err)
	for line := range strings.SplitSeq(info, "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_eval:")
		if !ok {
			continue
		}
		for field := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(field, "usec_per_call="); ok {
				us, err := strconv.ParseFloat(v, 64)
				require.NoError(tb, err)
				return us * 50 // 50 processes publish once per interval
			}
		}
	}
	tb.Fatal("no cmdstat_eval in INFO commandstats")
	return 0
}

// stormProcess is one simulated process of the join storm: its own Redis
// client and reporter (the real one), its shards' guild counts, and the
// change signal a Counter would give it.
type stormProcess struct {
	first  int // its shards are first .. first+len(guilds)-1
	guilds []atomic.Int64
	sig    signal
}

func (p *stormProcess) shards() []shardReport {
	out := make([]shardReport, len(p.guilds))
	for i := range p.guilds {
		out[i] = shardReport{Shard: p.first + i, Guilds: int(p.guilds[i].Load())}
	}
	return out
}

// pendingJoin is a join the leader's total does not show yet: its shard's
// count after it, and when it happened.
type pendingJoin struct {
	count int
	at    time.Time
}

// stormLags tracks the joins the leader's total does not show yet, per
// shard, and the lags of those it has shown.
type stormLags struct {
	mu      sync.Mutex
	pending [][]pendingJoin
	lags    []time.Duration
}

func (l *stormLags) join(shard, count int, at time.Time) {
	l.mu.Lock()
	l.pending[shard] = append(l.pending[shard], pendingJoin{count: count, at: at})
	l.mu.Unlock()
}

// observe takes the joins a total read at now shows, and reports whether
// some are still not shown.
func (l *stormLags) observe(t fleetTotal, now time.Time) (left bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for s, q := range l.pending {
		n := 0
		for n < len(q) && q[n].count <= t.PerShard[s] {
			l.lags = append(l.lags, now.Sub(q[n].at))
			n++
		}
		l.pending[s] = q[n:]
		left = left || n < len(q)
	}
	return left
}

// follow reads the leader's total every 5 ms until stop is closed and
// every join is shown, then closes done.
func (l *stormLags) follow(ctx context.Context, leader *shardCounts, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		t, err := leader.total(ctx)
		if err == nil {
			left := l.observe(t, time.Now())
			select {
			case <-stop:
				if !left {
					return
				}
			default:
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// quantile returns the q-quantile of the sorted lags in milliseconds.
func (l *stormLags) quantile(q float64) float64 {
	return float64(l.lags[int(q*float64(len(l.lags)-1))]) / float64(time.Millisecond)
}

// startStorm starts the simulated processes' reporters until the benchmark
// ends, each on its own client counted by evals, and returns them with the
// leader's view of the counts, once every shard has reported.
func startStorm(b *testing.B, processes, perProcess int, evals *evalCounter) ([]*stormProcess, *shardCounts) {
	srv := redistest.Start(b)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(func() { cancel(); wg.Wait() })
	procs := make([]*stormProcess, processes)
	for i := range procs {
		p := &stormProcess{first: i * perProcess, guilds: make([]atomic.Int64, perProcess)}
		procs[i] = p
		rdb := newClient(b, srv.Addr())
		rdb.AddHook(evals)
		counts, err := newShardCounts(rdb, "storm", processes*perProcess, countsConfig{})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := newReporter(counts, p.shards, reporterConfig{Every: 15 * time.Second, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		rep.changed = p.sig.changed
		wg.Go(func() { _ = rep.run(ctx) })
	}
	leader, err := newShardCounts(newClient(b, srv.Addr()), "storm", processes*perProcess, countsConfig{})
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if t, err := leader.total(ctx); err == nil && len(t.Missing) == 0 {
			return procs, leader
		}
		if time.Now().After(deadline) {
			b.Fatal("the processes never reported")
		}
	}
}

// BenchmarkJoinStorm is 1,000 guild joins a second across 50 processes of
// 10 shards each (simulated processes in this test process: each has its own
// client and runs the real reporter, woken by a change signal as
// autopost.Counter.Changed wakes it). One op is one join; run it with
// -benchtime=3000x for a 3 s storm. It reports the publishes (Redis round
// trips, one EVAL each) per second of all processes, and the lag from a join
// to the first leader read of the total that shows it (the leader reads every
// 5 ms, as fast as a Poster could ask): p50, p99 and max.
func BenchmarkJoinStorm(b *testing.B) {
	const processes, perProcess = 50, 10
	evals := &evalCounter{}
	procs, leader := startStorm(b, processes, perProcess, evals)
	lags := &stormLags{pending: make([][]pendingJoin, processes*perProcess)}
	stop, done := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go lags.follow(ctx, leader, stop, done)

	rng := rand.New(rand.NewPCG(1, 2))
	before := evals.n.Load()
	start := time.Now()
	i := 0
	for b.Loop() {
		if d := time.Until(start.Add(time.Duration(i) * time.Millisecond)); d > 0 {
			time.Sleep(d)
		}
		i++
		p := procs[rng.IntN(processes)]
		k := rng.IntN(perProcess)
		lags.join(p.first+k, int(p.guilds[k].Add(1)), time.Now())
		p.sig.fire()
	}
	elapsed := time.Since(start)
	close(stop)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		b.Fatal("the leader's total never showed every join")
	}
	publishes := evals.n.Load() - before
	slices.Sort(lags.lags)
	b.ReportMetric(float64(i)/elapsed.Seconds(), "joins/s")
	b.ReportMetric(float64(publishes)/elapsed.Seconds(), "publishes/s")
	b.ReportMetric(lags.quantile(0.5), "lag-p50-ms")
	b.ReportMetric(lags.quantile(0.99), "lag-p99-ms")
	b.ReportMetric(lags.quantile(1), "lag-max-ms")
}

// BenchmarkRenew measures one lease renewal: the floor (the renew script
// alone, as before the replicas' acknowledgement), on a single node (the
// script and ROLE), and on a master with one replica (the script, ROLE and
// WAIT for the replica).
func BenchmarkRenew(b *testing.B) {
	master := redistest.Start(b, redistest.WithArgs("--repl-diskless-sync-delay", "0"))
	ctx := context.Background()
	b.Run("floor", func(b *testing.B) { benchRenew(b, master, "floor", true) })
	b.Run("single", func(b *testing.B) { benchRenew(b, master, "single", false) })
	redistest.Start(b, redistest.WithArgs("--replicaof", "127.0.0.1", portOf(b, master)))
	mc := master.Client(b)
	require.Eventually(b, func() bool { return mc.Wait(ctx, 1, time.Second).Val() == 1 }, redistest.HAWait, redistest.HATick)
	b.Run("replica", func(b *testing.B) { benchRenew(b, master, "replica", false) })
}

func benchRenew(b *testing.B, srv *redistest.Server, bot string, floor bool) {
	rdb := newClient(b, srv.Addr())
	l, err := newLease(rdb, bot, leaseConfig{TTL: time.Minute})
	require.NoError(b, err)
	ctx := context.Background()
	tok, _, err := l.tryAcquire(ctx)
	require.NoError(b, err)
	require.Positive(b, tok)
	value := l.holder + ":" + strconv.FormatInt(tok, 10)
	b.ReportAllocs()
	for b.Loop() {
		var ok bool
		if floor {
			var n int
			n, err = renewScript.Run(ctx, rdb, []string{l.leaseKey}, value, l.ttl.Milliseconds()).Int()
			ok = n == 1
		} else {
			ok, err = l.renew(ctx, value, time.Minute)
		}
		if err != nil || !ok {
			b.Fatalf("renew: %v %v", ok, err)
		}
	}
}
