package autopost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCounterCounts checks the per-shard list and the missing shards.
func TestCounterCounts(t *testing.T) {
	t.Parallel()
	// addShard attaches a shard with n guilds, ready if session is not "".
	addShard := func(c *Counter, id, n int, session string) {
		sh := newShard(&c.t, id, 2)
		if session != "" {
			r := readyOf(n, uint64(100*len(c.shards)))
			r.session, r.shard = session, &[2]int{id, 2}
			sh.applyReady(r)
		}
		c.shards = append(c.shards, sh)
		c.t.attached.Add(1)
	}

	c := NewCounter(2)
	addShard(c, 1, 4, "a")
	addShard(c, 0, 0, "") // attached, no READY yet
	counts, err := c.Counts(t.Context())
	require.NoError(t, err)
	assert.Equal(t, Counts{Servers: 4, Shards: 2, PerShard: []int{0, 4}, Missing: []int{0}}, counts)
	assert.False(t, counts.Complete())

	c = NewCounter(2)
	addShard(c, 1, 4, "a")
	addShard(c, 0, 3, "b")
	counts, err = c.Counts(t.Context())
	require.NoError(t, err)
	assert.Equal(t, Counts{Servers: 7, Shards: 2, PerShard: []int{3, 4}}, counts)
	assert.True(t, counts.Complete())
	assert.Equal(t, []ShardStats{{ID: 0, Servers: 3, Ready: true}, {ID: 1, Servers: 4, Ready: true}}, c.AppendShards(nil))

	// A shard id beyond the count (READY said so) widens the list.
	addShard(c, 3, 1, "d")
	counts, err = c.Counts(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []int{3, 4, 0, 1}, counts.PerShard)
	assert.Equal(t, []int{2}, counts.Missing)
}

// TestAppendShardsAllocatesNothing: the snapshot a fleet process publishes
// costs no allocation with a reused buffer.
func TestAppendShardsAllocatesNothing(t *testing.T) {
	c := benchCounter(16, 10)
	buf := make([]ShardStats, 0, 16)
	allocs := testing.AllocsPerRun(100, func() { buf = c.AppendShards(buf[:0]) })
	assert.Zero(t, allocs)
	assert.Len(t, buf, 16)
}
