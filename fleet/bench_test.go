package fleet

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

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
