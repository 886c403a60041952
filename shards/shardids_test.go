package shards_test

import (
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/shards"
)

// TestWithShardIDsOpensOnlyThoseShards: a process running shards 1 and 3 of
// 4 makes and opens only their sessions, each identifying with the bot's
// total of 4, and routes only their guilds.
func TestWithShardIDsOpensOnlyThoseShards(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 4, shards.WithShardIDs(3, 1))
	ss := w.group.Sessions()
	require.Len(t, ss, 2)
	for i, want := range []int{1, 3} {
		assert.Equal(t, want, ss[i].ShardID)
		assert.Equal(t, 4, ss[i].ShardCount)
		assert.Equal(t, &[2]int{want, 4}, ss[i].Identify.Shard)
	}
	ready := make(chan int, 4)
	for _, s := range ss {
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.Ready) { ready <- s.ShardID })
	}
	require.NoError(t, w.group.Open(w.ctx()))
	require.NoError(t, w.srv.WaitConnected(w.ctx(), 2))
	assert.ElementsMatch(t, []int{1, 3}, []int{<-ready, <-ready})
	assert.Equal(t, 2, w.srv.ConnectedShards())

	for shard := range 4 {
		s, err := w.group.ForGuild(discordtest.GuildIDForShard(5, shard, 4))
		if shard == 1 || shard == 3 {
			require.NoError(t, err)
			assert.Equal(t, shard, s.ShardID)
			continue
		}
		require.ErrorIs(t, err, shards.ErrNotHere)
	}
}

func TestWithShardIDsRefusesBadIDs(t *testing.T) {
	t.Parallel()
	for name, ids := range map[string][]int{"none": {}, "too big": {0, 4}, "negative": {-1}, "twice": {2, 1, 2}} {
		_, err := shards.New("token", 4, shards.WithShardIDs(ids...))
		assert.Error(t, err, name)
	}
	for _, ids := range [][]int{{0, 4}, {-1}} {
		_, err := shards.New("token", 4, shards.WithShardIDs(ids...))
		requireInvalid(t, err, "shard ids")
	}
}
