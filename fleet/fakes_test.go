package fleet

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
)

// newFakeDiscord starts a fake Discord of len(perShard) shards, shard i in
// perShard[i] guilds, closed at the end of the test.
func newFakeDiscord(t *testing.T, perShard ...int) *discordtest.Server {
	t.Helper()
	var guilds []string
	for shard, n := range perShard {
		for i := range n {
			guilds = append(guilds, discordtest.GuildIDForShard(i, shard, len(perShard)))
		}
	}
	dc, err := discordtest.NewServer(discordtest.WithShardCount(len(perShard)), discordtest.WithGuilds(guilds...))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	return dc
}
