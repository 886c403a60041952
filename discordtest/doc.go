// Package discordtest is a fake Discord for testing a discordgo bot end to
// end: an unmodified discordgo (v0.29) session connects to it over real HTTP
// and a real websocket on 127.0.0.1. It is modelled on net/http/httptest, as
// is [github.com/dblkit/go-topgg/topgg/topggtest], the fake Top.gg, and both
// follow one convention: [NewServer] starts it and fails (never panics) on
// an invalid option, [Server.URL] is its root, [Server.APIBase] the REST
// root a session is pointed at, [Server.Client] an *http.Client that reaches
// only this server, [Server.Close] and [Server.CloseClientConnections] stop
// it and drop connections, and [Server.Inject] plays a [Fault] (the same
// fields in both kits). Every misuse is an error. Together they let a bot's
// own tests run the bot whole, without the internet or a token. It serves
// what a bot that lives on Top.gg uses, not Discord's whole API.
//
// A bot tested whole: real discordgo sessions on two shards against the fake
// Discord, a real Top.gg client against the fake Top.gg, and a user who
// types /vote before and after voting (the same program runs as the
// package's Example (Bot)):
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
//		if err == nil && st.Voted {
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
// A [Server] serves:
//
//   - the gateway: HELLO, IDENTIFY (token and shard pair checked), heartbeats
//     and their ACKs, READY followed by one GUILD_CREATE per available guild of
//     the shard, RESUME with replay of missed dispatches, and on demand
//     GUILD_CREATE / GUILD_DELETE ([Server.Join], [Server.Remove],
//     [Server.Outage], [Server.Restore]) and INTERACTION_CREATE for a
//     registered slash command ([Server.Interact]);
//   - the REST endpoints such a bot uses, under /api/v9 (and /api/v10): the
//     gateway URL, the bot user, the application, application commands,
//     member roles, interaction callbacks and their follow-ups, and direct
//     messages (opening a user's DM channel, sending into it). Every request
//     is recorded ([Server.Calls]); an unknown endpoint answers 404 like
//     Discord does.
//
// Tests inspect the effects with [Server.Commands], [Server.MemberRoles],
// [Server.RoleChanges], [Server.WaitInteractionReply] and
// [Server.DirectMessages] (or wait with [Server.WaitDirectMessages]), make a
// user refuse DMs with [Server.BlockDMs], and make Discord misbehave with
// [Server.Inject]: a 429 as Discord sends it (Fault.RetryAfter), a body that
// never ends (Fault.Endless), a request never answered (a long Fault.Delay,
// counted by [Server.Held]), or dropped connections
// ([Server.CloseClientConnections]).
//
// A guild belongs to shard (guild_id >> 22) % shard_count, as on Discord;
// [GuildIDForShard] makes IDs that land on a chosen shard. It serves 100,000
// guilds over 16 shards in a few seconds.
//
// Sessions made by [Server.NewSession] (or given [Server.Client]) can only
// reach this server: requests to any other host fail, so a test never
// touches the internet.
//
// Close every discordgo session before closing the Server: a session whose
// connection drops reconnects forever (discordgo's ShouldReconnectOnError),
// and its goroutines would outlive the test. For the same reason tests set
// ShouldReconnectOnError to false unless they test reconnects (see
// [Server.NewSession]).
package discordtest
