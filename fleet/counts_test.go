package fleet

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
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
