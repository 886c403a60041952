package testkit

import (
	"sync"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// Discord starts a fake Discord of len(perShard) shards, shard i in
// perShard[i] guilds, closed at the end of the test.
func Discord(t testing.TB, perShard []int, opts ...discordtest.Option) *discordtest.Server {
	t.Helper()
	var guilds []string
	for shard, n := range perShard {
		for i := range n {
			guilds = append(guilds, discordtest.GuildIDForShard(i, shard, len(perShard)))
		}
	}
	opts = append([]discordtest.Option{discordtest.WithShardCount(len(perShard)), discordtest.WithGuilds(guilds...)}, opts...)
	dc, err := discordtest.NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	return dc
}

// TopGG starts a fake Top.gg whose project is the bot of dc (so that v0
// stats for READY's bot are accepted), closed at the end of the test.
func TopGG(t testing.TB, dc *discordtest.Server, opts ...topggtest.Option) *topggtest.Server {
	t.Helper()
	project := topggtest.DiscordBot()
	project.PlatformID = dc.BotUserID()
	tg, err := topggtest.NewServer(append([]topggtest.Option{topggtest.WithProject(project)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	return tg
}

// Service starts a fake Top.gg, closed at the end of the test, and a real
// client of it.
func Service(t testing.TB, opts ...topggtest.Option) (*topggtest.Server, *topgg.Client) {
	t.Helper()
	tg, err := topggtest.NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	client, err := tg.NewClient()
	require.NoError(t, err)
	return tg, client
}

// Sessions makes one real discordgo session per shard of dc, not open. At
// the end of the test it closes them all at once (discordgo's Close sleeps
// a second), before dc closes as discordtest asks.
func Sessions(t testing.TB, dc *discordtest.Server, shards int) []*discordgo.Session {
	t.Helper()
	ss := make([]*discordgo.Session, shards)
	for i := range ss {
		s, err := dc.NewSession(i, shards)
		require.NoError(t, err)
		ss[i] = s
	}
	t.Cleanup(func() { CloseAll(ss) })
	return ss
}

// CloseAll closes the sessions at once.
func CloseAll(ss []*discordgo.Session) {
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(func() { _ = s.Close() })
	}
	httpx.Within("the sessions' Close", wg.Wait)
}
