package discordtest_test

import (
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
)

func TestInteractVoteAndReply(t *testing.T) {
	t.Parallel()
	const shards = 2
	guild := discordtest.GuildIDForShard(0, 1, shards) // on shard 1
	const user, voter = "4000000000000000004", "5000000000000000005"
	srv := newServer(t, discordtest.WithShardCount(shards), discordtest.WithGuilds(guild))
	ctx := testContext(t)

	s, err := srv.NewSession(1, shards)
	require.NoError(t, err)
	_, err = s.ApplicationCommandBulkOverwrite(srv.ApplicationID(), "", []*discordgo.ApplicationCommand{voteCommand("Vote")})
	require.NoError(t, err)
	require.NoError(t, s.GuildMemberRoleAdd(guild, user, voter))

	s.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		if !assert.Equal(t, discordgo.InteractionApplicationCommand, i.Type) {
			return
		}
		data := i.ApplicationCommandData()
		assert.Equal(t, "vote", data.Name)
		assert.Equal(t, srv.Commands()[0].ID, data.ID)
		assert.Equal(t, guild, i.GuildID)
		assert.Equal(t, srv.ApplicationID(), i.AppID)
		if assert.NotNil(t, i.Member) && assert.NotNil(t, i.Member.User) {
			assert.Equal(t, user, i.Member.User.ID)
			assert.Equal(t, []string{voter}, i.Member.Roles)
		}
		if assert.Len(t, data.Options, 1) {
			assert.Equal(t, "remind", data.Options[0].Name)
			assert.True(t, data.Options[0].BoolValue())
		}
		assert.NoError(t, s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "Thanks <@" + i.Member.User.ID + ">", Flags: discordgo.MessageFlagsEphemeral},
		}))
	})
	require.NoError(t, s.Open())
	t.Cleanup(func() { assert.NoError(t, s.Close()) })

	id, token, err := srv.Interact(ctx, discordtest.InteractionSpec{
		Command: "vote", GuildID: guild, UserID: user,
		Options: []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: "remind", Type: discordgo.ApplicationCommandOptionBoolean, Value: true},
		},
	})
	require.NoError(t, err)
	assert.NotEmpty(t, id)
	assert.NotEmpty(t, token)

	reply, err := srv.WaitInteractionReply(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, discordgo.InteractionResponseChannelMessageWithSource, reply.Type)
	assert.Equal(t, "Thanks <@"+user+">", reply.Content)
	assert.Equal(t, discordgo.MessageFlagsEphemeral, reply.Flags)
	assert.Contains(t, string(reply.Body), `"content":"Thanks`)

	// A second callback is refused; a wrong token is unknown.
	it := &discordgo.Interaction{ID: id, Token: token, AppID: srv.ApplicationID()}
	again := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "again"}}
	requireRESTError(t, s.InteractionRespond(it, again), http.StatusBadRequest, 40060)
	requireRESTError(t, s.InteractionRespond(&discordgo.Interaction{ID: id, Token: "wrong"}, again), http.StatusNotFound, 10062)
	assert.Equal(t, 1, srv.InteractionReplies())
}

func TestInteractDeferred(t *testing.T) {
	t.Parallel()
	guild := discordtest.GuildIDForShard(0, 0, 1)
	srv := newServer(t, discordtest.WithGuilds(guild))
	s, err := srv.NewSession(0, 1)
	require.NoError(t, err)
	// A guild command, found before the global ones.
	_, err = s.ApplicationCommandBulkOverwrite(srv.ApplicationID(), guild, []*discordgo.ApplicationCommand{voteCommand("Vote")})
	require.NoError(t, err)

	s.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) {
		assert.NoError(t, s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		}))
	})
	require.NoError(t, s.Open())
	t.Cleanup(func() { assert.NoError(t, s.Close()) })

	ctx := testContext(t)
	id, _, err := srv.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: guild, UserID: "42"})
	require.NoError(t, err)
	first, err := srv.WaitInteractionReply(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, discordgo.InteractionResponseDeferredChannelMessageWithSource, first.Type)
}

func TestInteractInDM(t *testing.T) {
	t.Parallel()
	const shards = 2
	srv := newServer(t, discordtest.WithShardCount(shards))
	s, err := srv.NewSession(0, shards) // DMs go to shard 0
	require.NoError(t, err)
	_, err = s.ApplicationCommandBulkOverwrite(srv.ApplicationID(), "", []*discordgo.ApplicationCommand{voteCommand("Vote")})
	require.NoError(t, err)
	got := make(chan *discordgo.InteractionCreate, 1)
	s.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) { got <- i })
	require.NoError(t, s.Open())
	t.Cleanup(func() { assert.NoError(t, s.Close()) })

	ctx := testContext(t)
	id, _, err := srv.Interact(ctx, discordtest.InteractionSpec{Command: "vote", UserID: "42", Username: "alice"})
	require.NoError(t, err)
	select {
	case i := <-got:
		assert.Equal(t, id, i.ID)
		assert.Empty(t, i.GuildID)
		assert.Nil(t, i.Member)
		if assert.NotNil(t, i.User) {
			assert.Equal(t, "42", i.User.ID)
			assert.Equal(t, "alice", i.User.Username)
		}
		assert.Equal(t, discordgo.InteractionContextBotDM, i.Context)
	case <-ctx.Done():
		t.Fatal("no INTERACTION_CREATE")
	}
}

func TestInteractErrors(t *testing.T) {
	t.Parallel()
	const shards = 2
	online := discordtest.GuildIDForShard(0, 0, shards)
	offline := discordtest.GuildIDForShard(0, 1, shards)
	srv := newServer(t, discordtest.WithShardCount(shards), discordtest.WithGuilds(online, offline))
	_, rec := openSession(t, srv, 0, shards, true)
	rec.waitLog(1)
	ctx := testContext(t)

	s := restSession(t, srv)
	_, _, err := srv.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: online, UserID: "42"})
	assert.ErrorIs(t, err, discordtest.ErrUnknownCommand, "nothing registered yet")
	_, err = s.ApplicationCommandBulkOverwrite(srv.ApplicationID(), "", []*discordgo.ApplicationCommand{voteCommand("Vote")})
	require.NoError(t, err)

	for name, tc := range map[string]struct {
		spec discordtest.InteractionSpec
		want error
	}{
		"unknown command": {discordtest.InteractionSpec{Command: "nope", GuildID: online, UserID: "42"}, discordtest.ErrUnknownCommand},
		"unknown guild":   {discordtest.InteractionSpec{Command: "vote", GuildID: "77", UserID: "42"}, discordtest.ErrUnknownGuild},
		"shard offline":   {discordtest.InteractionSpec{Command: "vote", GuildID: offline, UserID: "42"}, discordtest.ErrShardNotConnected},
		"no user":         {discordtest.InteractionSpec{Command: "vote", GuildID: online}, discordtest.ErrInvalidSnowflake},
	} {
		_, _, err := srv.Interact(ctx, tc.spec)
		assert.ErrorIs(t, err, tc.want, name)
	}
	require.NoError(t, srv.Outage(ctx, online))
	_, _, err = srv.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: online, UserID: "42"})
	assert.ErrorIs(t, err, discordtest.ErrGuildUnavailable)
}
