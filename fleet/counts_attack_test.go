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
)

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
		tot, err := c.Total(ctx)
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
	tot, err := c.Total(ctx)
	require.NoError(t, err)
	require.True(t, tot.Postable(), "missing %v", tot.Missing)
	assert.Equal(t, int64(12), tot.Servers)

	// A new episode is logged again; the shard's own publish repairs it.
	plant(4_000_000_000, now.Add(24*time.Hour))
	tot, err = c.Total(ctx)
	require.NoError(t, err)
	assert.False(t, tot.Postable())
	assert.Equal(t, 2, strings.Count(logs.String(), "stamped ahead"))
	publish(t, c, shardReport{Shard: 2, Guilds: 5})
	tot, err = c.Total(ctx)
	require.NoError(t, err)
	require.True(t, tot.Postable())
	assert.Equal(t, int64(12), tot.Servers)
}
