package autopost

import (
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
)

// TestSnapshotV0 checks the v0 snapshot: the per-shard list, the ready shard
// ids, and whether every shard of the bot is here exactly once.
func TestSnapshotV0(t *testing.T) {
	t.Parallel()
	// addShard attaches a shard with n guilds, ready if session is not "".
	addShard := func(p *Poster, id, n int, session string) {
		sh := newShard(p.t, id, 2)
		if session != "" {
			r := readyOf(n, uint64(100*len(p.shards)))
			r.session, r.shard = session, &[2]int{id, 2}
			sh.applyReady(r)
		}
		p.mu.Lock()
		p.shards = append(p.shards, sh)
		p.sessions[&discordgo.Session{}] = sh
		p.mu.Unlock()
		p.t.attached.Add(1)
	}

	p := testPoster(t, Config{ShardCount: 2})
	addShard(p, 1, 4, "a")
	addShard(p, 0, 0, "") // attached, no READY yet
	snap := p.snapshotV0()
	assert.Equal(t, 4, snap.servers)
	assert.Equal(t, 2, snap.shards)
	assert.Equal(t, []int{0, 4}, snap.perShard)
	assert.Equal(t, []int{1}, snap.ids)
	assert.False(t, snap.local, "shard 0 is not ready")

	p = testPoster(t, Config{ShardCount: 2})
	addShard(p, 1, 4, "a")
	addShard(p, 0, 3, "b")
	snap = p.snapshotV0()
	assert.Equal(t, 7, snap.servers)
	assert.Equal(t, []int{3, 4}, snap.perShard)
	assert.Equal(t, []int{0, 1}, snap.ids)
	assert.True(t, snap.local)

	// The same shard twice (two processes' worth in one) is not "local".
	addShard(p, 0, 2, "c")
	snap = p.snapshotV0()
	assert.Equal(t, 9, snap.servers)
	assert.Equal(t, []int{5, 4}, snap.perShard)
	assert.Equal(t, []int{0, 1}, snap.ids)
	assert.False(t, snap.local)

	// A shard id beyond ShardCount widens the list.
	addShard(p, 3, 1, "d")
	snap = p.snapshotV0()
	assert.Equal(t, []int{5, 4, 0, 1}, snap.perShard)
	assert.False(t, snap.local)
}
