// Package discordtest is a fake Discord for testing a discordgo bot end to
// end, without the internet or a token: an unmodified discordgo (v0.29)
// session connects to it over real HTTP and websocket on 127.0.0.1. It
// follows topggtest's httptest convention ([NewServer], [Server.Client],
// [Server.Close], [Server.Inject] ...) and serves what a bot on Top.gg uses,
// not Discord's whole API. A bot tested whole (the package's Example (Bot)):
//
//	// The bot under test: /vote looks the user up on Top.gg and gives
//	// voters a role.
//	type voteBot struct {
//		topgg  *topgg.Client
//		roleID string
//	}
//
//	func (b *voteBot) onInteraction(s *discordgo.Session, i *discordgo.InteractionCreate) {
//		if i.Type != discordgo.InteractionApplicationCommand || i.Member == nil {
//			return
//		}
//		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
//		defer cancel()
//		user, msg := i.Member.User.ID, "Vote for me on Top.gg, then ask again."
//		st, err := b.topgg.VoteStatus(ctx, user, topgg.UserIDDiscord)
//		if err == nil && st != nil {
//			err = s.GuildMemberRoleAdd(i.GuildID, user, b.roleID, discordgo.WithContext(ctx))
//			msg = "Thank you for voting: enjoy the voter role."
//		}
//		if err != nil {
//			msg = "Something went wrong; try again later."
//		}
//		_ = s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{
//			Type: discordgo.InteractionResponseChannelMessageWithSource,
//			Data: &discordgo.InteractionResponseData{Content: msg},
//		}, discordgo.WithContext(ctx))
//	}
//
//	func TestVote(t *testing.T) {
//		ctx := t.Context()
//		const voter, role = "300000000000000042", "900000000000000777"
//		guild := discordtest.GuildIDForShard(0, 1, 2) // a guild on shard 1 of 2
//		discord, err := discordtest.NewServer(discordtest.WithShardCount(2), discordtest.WithGuilds(guild))
//		require.NoError(t, err)
//		t.Cleanup(discord.Close) // cleanups run last first: after the sessions' Close
//		project := topggtest.DiscordBot()
//		project.PlatformID = discord.BotUserID()
//		tg, err := topggtest.NewServer(topggtest.WithProject(project))
//		require.NoError(t, err)
//		t.Cleanup(tg.Close)
//
//		// The bot, as it runs in production, given the fakes' URLs and tokens.
//		client, err := tg.NewClient() // topgg.New with tg's token, URL and HTTP client
//		require.NoError(t, err)
//		group, err := shards.New(discord.Token(), 2, shards.WithAPIBase(discord.APIBase()))
//		require.NoError(t, err)
//		t.Cleanup(func() { group.Close() })
//		bot := &voteBot{topgg: client, roleID: role}
//		for _, s := range group.Sessions() {
//			s.ShouldReconnectOnError = false // see Server.NewSession
//			s.AddHandler(bot.onInteraction)
//		}
//		cmd := &discordgo.ApplicationCommand{Name: "vote", Description: "Vote and get the voter role"}
//		_, err = group.Sessions()[0].ApplicationCommandBulkOverwrite(discord.ApplicationID(), "",
//			[]*discordgo.ApplicationCommand{cmd}, discordgo.WithContext(ctx))
//		require.NoError(t, err)
//		require.NoError(t, group.Open(ctx))
//
//		// A user types /vote; the test waits for the bot's answer and its effect.
//		vote := func() string {
//			id, _, err := discord.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: guild, UserID: voter})
//			require.NoError(t, err)
//			reply, err := discord.WaitInteractionReply(ctx, id)
//			require.NoError(t, err)
//			return reply.Content
//		}
//		require.Equal(t, "Vote for me on Top.gg, then ask again.", vote())
//		require.Empty(t, discord.MemberRoles(guild, voter))
//		tg.AddVote(topggtest.Vote{UserID: "100000000000000042", PlatformID: voter})
//		require.Equal(t, "Thank you for voting: enjoy the voter role.", vote())
//		require.Equal(t, []string{role}, discord.MemberRoles(guild, voter))
//	}
//
// The gateway speaks HELLO, IDENTIFY, heartbeats, READY, GUILD_CREATE and
// RESUME with replay; REST records every request ([Server.Calls]) and answers
// an unknown endpoint 404. A guild belongs to shard (guild_id >> 22) %
// shard_count ([GuildIDForShard]). Close every session before the Server.
package discordtest
