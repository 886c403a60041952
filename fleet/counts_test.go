package fleet_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/topgg"
)

// process publishes its shards, as one process of the fleet would.
func publish(t *testing.T, c *fleet.Counts, shards ...fleet.ShardCount) {
	t.Helper()
	require.NoError(t, c.Publish(context.Background(), shards))
}

func TestTotalIsExactOnceEveryShardReported(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	// Three processes, six shards, separate clients.
	var procs []*fleet.Counts
	for range 3 {
		c, err := fleet.NewCounts(srv.Client(t), "counts1", 6, fleet.CountsConfig{})
		require.NoError(t, err)
		procs = append(procs, c)
	}
	publish(t, procs[0], fleet.ShardCount{Shard: 0, Guilds: 10}, fleet.ShardCount{Shard: 1, Guilds: 11})
	publish(t, procs[2], fleet.ShardCount{Shard: 4, Guilds: 14}, fleet.ShardCount{Shard: 5, Guilds: 15})

	tot, err := procs[1].Total(ctx)
	require.NoError(t, err)
	assert.False(t, tot.Postable(), "shards 2 and 3 never reported")
	assert.Equal(t, []int{2, 3}, tot.Missing)
	assert.Equal(t, []int{10, 11, 0, 0, 14, 15}, tot.PerShard)

	publish(t, procs[1], fleet.ShardCount{Shard: 2, Guilds: 12}, fleet.ShardCount{Shard: 3, Guilds: 0})
	tot, err = procs[0].Total(ctx)
	require.NoError(t, err)
	require.True(t, tot.Postable(), "missing: %v", tot.Missing)
	assert.Equal(t, int64(10+11+12+0+14+15), tot.Servers)
	assert.Equal(t, 6, tot.ShardCount)
	assert.Equal(t, []int{10, 11, 12, 0, 14, 15}, tot.PerShard)
	assert.WithinDuration(t, time.Now(), tot.At, 5*time.Second)

	// A new count replaces the old one.
	publish(t, procs[0], fleet.ShardCount{Shard: 0, Guilds: 100})
	tot, err = procs[2].Total(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(100+11+12+0+14+15), tot.Servers)

	// Another shard count is another fleet layout: nothing of it is known yet.
	other, err := fleet.NewCounts(srv.Client(t), "counts1", 8, fleet.CountsConfig{})
	require.NoError(t, err)
	tot, err = other.Total(ctx)
	require.NoError(t, err)
	assert.Len(t, tot.Missing, 8)
	assert.Zero(t, tot.Servers)
}

func TestStaleShardIsKeptWithinTheBoundAndDroppedAfter(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	c, err := fleet.NewCounts(rdb, "counts2", 3, fleet.CountsConfig{}) // MaxAge 1 h
	require.NoError(t, err)
	publish(t, c, fleet.ShardCount{Shard: 0, Guilds: 5}, fleet.ShardCount{Shard: 1, Guilds: 6}, fleet.ShardCount{Shard: 2, Guilds: 7})

	// Shard 2's process stopped reporting 59 minutes ago (Redis's clock): still counted.
	now, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	age := func(ago time.Duration) {
		var rec [8]byte
		binary.BigEndian.PutUint32(rec[:], 7)
		binary.BigEndian.PutUint32(rec[4:], uint32(now.Add(-ago).Unix()))
		require.NoError(t, rdb.SetRange(ctx, fleet.Key("counts2", "counts:3"), 2*8, string(rec[:])).Err())
	}
	age(59 * time.Minute)
	tot, err := c.Total(ctx)
	require.NoError(t, err)
	require.True(t, tot.Postable())
	assert.Equal(t, int64(18), tot.Servers)
	assert.GreaterOrEqual(t, tot.Oldest, 59*time.Minute)

	// 61 minutes: past the bound, the shard is missing and nothing is postable.
	age(61 * time.Minute)
	tot, err = c.Total(ctx)
	require.NoError(t, err)
	assert.False(t, tot.Postable())
	assert.Equal(t, []int{2}, tot.Missing)
	assert.Equal(t, []int{5, 6, 0}, tot.PerShard)
}

func TestShardDroppedAfterItsProcessStopsReporting(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	cfg := fleet.CountsConfig{MaxAge: time.Second}
	alive, err := fleet.NewCounts(srv.Client(t), "counts3", 2, cfg)
	require.NoError(t, err)
	gone, err := fleet.NewCounts(srv.Client(t), "counts3", 2, cfg)
	require.NoError(t, err)
	publish(t, gone, fleet.ShardCount{Shard: 1, Guilds: 9})
	publish(t, alive, fleet.ShardCount{Shard: 0, Guilds: 4})
	tot, err := alive.Total(ctx)
	require.NoError(t, err)
	require.True(t, tot.Postable())
	require.Equal(t, int64(13), tot.Servers)

	// Only shard 0 keeps reporting; shard 1 drops out once past MaxAge.
	require.Eventually(t, func() bool {
		publish(t, alive, fleet.ShardCount{Shard: 0, Guilds: 4})
		tot, err = alive.Total(ctx)
		return err == nil && len(tot.Missing) == 1 && tot.Missing[0] == 1
	}, 5*time.Second, 50*time.Millisecond)
	assert.False(t, tot.Postable())
	assert.Equal(t, int64(4), tot.Servers)
}

func TestCountsMisuse(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	_, err := fleet.NewCounts(nil, "b", 1, fleet.CountsConfig{})
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	_, err = fleet.NewCounts(srv.Client(t), "b", 0, fleet.CountsConfig{})
	require.ErrorIs(t, err, fleet.ErrBadConfig)
	_, err = fleet.NewCounts(srv.Client(t), "b", 1, fleet.CountsConfig{MaxAge: time.Millisecond})
	require.ErrorIs(t, err, fleet.ErrBadConfig)
	c, err := fleet.NewCounts(srv.Client(t), "b", 2, fleet.CountsConfig{})
	require.NoError(t, err)
	require.ErrorIs(t, c.Publish(ctx, []fleet.ShardCount{{Shard: 0, Guilds: 1}, {Shard: 2, Guilds: 1}}), fleet.ErrBadConfig)
	require.ErrorIs(t, c.Publish(ctx, []fleet.ShardCount{{Shard: 0, Guilds: -1}}), fleet.ErrBadConfig)
	tot, err := c.Total(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, tot.Missing, "a refused publish writes nothing")
	require.NoError(t, c.Publish(ctx, nil))

	var zero fleet.Counts
	require.ErrorIs(t, zero.Publish(ctx, []fleet.ShardCount{{}}), topgg.ErrNotConfigured)
	_, err = zero.Total(ctx)
	require.ErrorIs(t, err, topgg.ErrNotConfigured)
	assert.False(t, fleet.Total{}.Postable())
}

func TestCountsReturnErrorsWhenRedisIsDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c, err := fleet.NewCounts(newClient(t, srv.Addr()), "down", 2, fleet.CountsConfig{})
	require.NoError(t, err)
	srv.Kill()
	ctx := context.Background()
	require.Error(t, c.Publish(ctx, []fleet.ShardCount{{Shard: 0, Guilds: 1}}))
	_, err = c.Total(ctx)
	require.Error(t, err)
	srv.Restart()
	require.NoError(t, c.Publish(ctx, []fleet.ShardCount{{Shard: 0, Guilds: 1}, {Shard: 1, Guilds: 2}}))
	tot, err := c.Total(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), tot.Servers)
}
