package readme_test

import (
	"context"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterperks"
)

// premiumCommand and premium stand for a bot's own command for voters.
var premiumCommand = &discordgo.ApplicationCommand{Name: "premium", Description: "For voters only"}

func premium(s *discordgo.Session, i *discordgo.InteractionCreate) {
	_ = s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "premium content"},
	})
}

// TestReadmeVoterBot: the bot of the README's voter features snippet, run
// against the fakes: a user opts in with /vote remind:True, votes, gets the
// role and passes the gate; when the vote expires the role is taken back
// and the user gets one reminder saying how to stop them.
func TestReadmeVoterBot(t *testing.T) {
	t.Parallel()
	guild, role, voter := discordtest.GuildIDForShard(0, 0, 1), "900000000000000777", "300000000000000042"
	discord, err := discordtest.NewServer(discordtest.WithGuilds(guild))
	require.NoError(t, err)
	t.Cleanup(discord.Close)
	listing, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(listing.Close)
	client, err := listing.NewClient()
	require.NoError(t, err)
	session, err := discord.NewSession(0, 1)
	require.NoError(t, err)
	state, err := boltstate.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, state.Close()) })

	cfg := plugin.Config{Autopost: "off", SyncCommands: new(false), VotePollInterval: new(20 * time.Millisecond),
		VoteLookback: 13 * time.Hour}
	p, err := newVoterBot(t.Context(), client, cfg, state, []*discordgo.Session{session}, discord.ApplicationID(), guild, role)
	require.NoError(t, err)
	var registered []string
	for _, c := range discord.Commands() {
		registered = append(registered, c.Name)
	}
	assert.ElementsMatch(t, []string{"premium", voterperks.VoteCommand, voterperks.LeaderboardCommand}, registered,
		"RegisterCommands put the bot's and the perks' commands on Discord")
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-ran:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10 s of its context's end")
		}
		require.NoError(t, session.Close())
	})
	require.NoError(t, session.Open())

	use := func(command string, opts ...*discordgo.ApplicationCommandInteractionDataOption) string {
		id, _, err := discord.Interact(t.Context(), discordtest.InteractionSpec{Command: command, GuildID: guild, UserID: voter, Options: opts})
		require.NoError(t, err)
		reply, err := discord.WaitInteractionReply(t.Context(), id)
		require.NoError(t, err)
		return reply.Content
	}
	// Wait for Run to have read the history before the first /vote, whose
	// answer reads the voter's ledger.
	require.Eventually(t, func() bool { return p.Active(voter).Covered }, 10*time.Second, 5*time.Millisecond)
	assert.Contains(t, use("vote", &discordgo.ApplicationCommandInteractionDataOption{
		Name: "remind", Type: discordgo.ApplicationCommandOptionBoolean, Value: true}), "I will send you a direct message")
	now := time.Now().UTC()
	listing.AddVote(topggtest.Vote{UserID: "100000000000000042", PlatformID: voter, CreatedAt: now, ExpiresAt: now.Add(2 * time.Second)})
	require.Eventually(t, func() bool { return p.Active(voter).Active }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, "premium content", use("premium"))
	dms, err := discord.WaitDirectMessages(t.Context(), voter, 1)
	require.NoError(t, err)
	assert.Contains(t, dms[0].Content, "To stop these reminders")
	assert.Contains(t, use("vote"), "all time: 1", "/vote does not show the voter's ledger")
	assert.Empty(t, discord.MemberRoles(guild, voter))
	added := 0
	for _, c := range discord.RoleChanges() {
		if c.Added && c.UserID == voter && c.RoleID == role {
			added++
		}
	}
	assert.Equal(t, 1, added, "the role was never given")
	assert.Contains(t, use("premium"), "https://top.gg/bot/"+discord.ApplicationID()+"/vote", "the gate let an expired vote through")
}
