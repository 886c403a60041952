package discordtest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestPackageDocVote is the test in the package comment, word for word, so
// that what go doc shows compiles and passes.
func TestPackageDocVote(t *testing.T) {
	ctx := t.Context()
	const voter, role = "300000000000000042", "900000000000000777"
	guild := discordtest.GuildIDForShard(0, 1, 2) // a guild on shard 1 of 2
	discord, err := discordtest.NewServer(discordtest.WithShardCount(2), discordtest.WithGuilds(guild))
	require.NoError(t, err)
	t.Cleanup(discord.Close) // cleanups run last first: after the sessions' Close
	project := topggtest.DiscordBot()
	project.PlatformID = discord.BotUserID()
	tg, err := topggtest.NewServer(topggtest.WithProject(project))
	require.NoError(t, err)
	t.Cleanup(tg.Close)

	// The bot, as it runs in production, given the fakes' URLs and tokens.
	client, err := tg.NewClient() // topgg.New with tg's token, URL and HTTP client
	require.NoError(t, err)
	group, err := shards.New(discord.Token(), 2, shards.WithAPIBase(discord.APIBase()))
	require.NoError(t, err)
	t.Cleanup(func() { group.Close() })
	bot := &voteBot{topgg: client, roleID: role}
	for _, s := range group.Sessions() {
		s.ShouldReconnectOnError = false // see Server.NewSession
		s.AddHandler(bot.onInteraction)
	}
	cmd := &discordgo.ApplicationCommand{Name: "vote", Description: "Vote and get the voter role"}
	_, err = group.Sessions()[0].ApplicationCommandBulkOverwrite(discord.ApplicationID(), "",
		[]*discordgo.ApplicationCommand{cmd}, discordgo.WithContext(ctx))
	require.NoError(t, err)
	require.NoError(t, group.Open(ctx))

	// A user types /vote; the test waits for the bot's answer and its effect.
	vote := func() string {
		id, _, err := discord.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: guild, UserID: voter})
		require.NoError(t, err)
		reply, err := discord.WaitInteractionReply(ctx, id)
		require.NoError(t, err)
		return reply.Content
	}
	require.Equal(t, "Vote for me on Top.gg, then ask again.", vote())
	require.Empty(t, discord.MemberRoles(guild, voter))
	tg.AddVote(topggtest.Vote{UserID: "100000000000000042", PlatformID: voter})
	require.Equal(t, "Thank you for voting: enjoy the voter role.", vote())
	require.Equal(t, []string{role}, discord.MemberRoles(guild, voter))
}

// TestPackageDocMatchesCode: the bot and the test in the package comment are
// the code of Example_bot's voteBot and of TestPackageDocVote.
func TestPackageDocMatchesCode(t *testing.T) {
	t.Parallel()
	doc := readFile(t, "doc.go")
	var code strings.Builder
	for line := range strings.Lines(doc) {
		if rest, ok := strings.CutPrefix(line, "//\t"); ok {
			code.WriteString(rest)
		} else if line == "//\n" {
			code.WriteString("\n")
		}
	}
	inDoc := code.String()
	for file, start := range map[string]string{
		"example_bot_test.go": "func (b *voteBot) onInteraction(",
		"doc_test.go":         "\tctx := t.Context()",
	} {
		src := readFile(t, file)
		from := strings.Index(src, start)
		require.GreaterOrEqual(t, from, 0, file)
		block := src[from : from+strings.Index(src[from:], "\n}\n")+3]
		require.Contains(t, inDoc, block, "the package comment no longer shows %s", file)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(b)
}
