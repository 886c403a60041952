package discordtest_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
)

func TestGuildIDForShardLandsOnItsShard(t *testing.T) {
	t.Parallel()
	for count := 1; count <= 16; count++ {
		seen := map[string]bool{}
		for shard := range count {
			for n := range 40 {
				id := discordtest.GuildIDForShard(n, shard, count)
				got, err := discordtest.ShardForGuild(id, count)
				require.NoError(t, err)
				require.Equal(t, shard, got, "GuildIDForShard(%d, %d, %d) = %s", n, shard, count, id)
				require.False(t, seen[id], "duplicate %s", id)
				seen[id] = true
				require.Equal(t, id, discordtest.GuildIDForShard(n, shard, count), "stable")
			}
		}
	}
}

func TestShardForGuildMatchesDiscordFormula(t *testing.T) {
	t.Parallel()
	// Discord's documented example: guild 41771983423143937 on 2 shards.
	const id uint64 = 41771983423143937
	for _, count := range []int{1, 2, 3, 7, 16} {
		got, err := discordtest.ShardForGuild(strconv.FormatUint(id, 10), count)
		require.NoError(t, err)
		assert.Equal(t, int((id>>22)%uint64(count)), got)
	}
}

func TestShardForGuildRejectsBadInput(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"", "abc", "-1", "+1", "01", "18446744073709551616"} {
		_, err := discordtest.ShardForGuild(id, 2)
		assert.ErrorIs(t, err, discordtest.ErrInvalidSnowflake, "%q", id)
	}
	_, err := discordtest.ShardForGuild("1", 0)
	assert.Error(t, err)
}

// TestGuildIDForShardMistakes: a mistake gives an ID that every use
// refuses, without a panic.
func TestGuildIDForShardMistakes(t *testing.T) {
	t.Parallel()
	for _, args := range [][3]int{{-1, 0, 1}, {0, 1, 1}, {0, -1, 2}, {0, 0, 0}, {1 << 50, 0, 1}} {
		id := discordtest.GuildIDForShard(args[0], args[1], args[2])
		_, err := discordtest.ShardForGuild(id, 2)
		assert.ErrorIs(t, err, discordtest.ErrInvalidSnowflake, fmt.Sprint(args))
		_, err = discordtest.NewServer(discordtest.WithGuilds(id))
		assert.ErrorIs(t, err, discordtest.ErrInvalidSnowflake, fmt.Sprint(args))
	}
}
