// Package discordtest is a fake Discord for testing a discordgo bot end to
// end: an unmodified discordgo (v0.29) session connects to it over real HTTP
// and a real websocket on 127.0.0.1. It is modelled on net/http/httptest:
// [NewServer] starts it, [Server.APIBase] and [Server.HTTPClient] point a
// session's REST calls at it, [Server.Close] stops it. Next to
// [github.com/dblkit/go-topgg/topgg/topggtest], the fake Top.gg, it lets a
// bot's own tests run the bot whole, without the internet or a token. It
// serves what a bot that lives on Top.gg uses, not Discord's whole API.
//
// A test of a bot that answers /vote from Top.gg and gives voters a role (the
// whole program is the package's Example (Bot)):
//
//	guild := discordtest.GuildIDForShard(0, 1, 2) // a guild on shard 1 of 2
//	discord, _ := discordtest.NewServer(discordtest.WithShardCount(2), discordtest.WithGuilds(guild))
//	defer discord.Close() // after the sessions' Close
//	tg := topggtest.NewServer(topggtest.WithProject(project))
//	defer tg.Close()
//	tg.AddVote(topggtest.Vote{UserID: "...", PlatformID: voter})
//
//	// The bot, as in production, with the fakes' URLs and tokens.
//	group, _ := shards.New(discord.Token(), 2, shards.WithAPIBase(discord.APIBase()))
//	defer group.Close()
//	... add the bot's handlers, register its commands, group.Open(ctx) ...
//
//	// A user types /vote; the test waits for the bot's answer and its effect.
//	id, _, _ := discord.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: guild, UserID: voter})
//	reply, _ := discord.WaitInteractionReply(ctx, id)
//	roles := discord.MemberRoles(guild, voter)
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
// [Server.RoleChanges], [Server.InteractionReplies] and
// [Server.DirectMessages] (or wait with [Server.WaitDirectMessages]), make a
// user refuse DMs with [Server.BlockDMs], and make Discord
// misbehave with [Server.Inject]: a 429 with Retry-After ([RateLimited]), a
// body that never ends ([LongBody]), a request never answered ([NoAnswer]),
// or a dropped gateway connection ([Server.DropConnection]).
//
// A guild belongs to shard (guild_id >> 22) % shard_count, as on Discord;
// [GuildIDForShard] makes IDs that land on a chosen shard. It serves 100,000
// guilds over 16 shards in a few seconds.
//
// Sessions made by [Server.NewSession] (or configured with [Server.HTTPClient]
// and [Server.Dialer]) can only reach this server: requests to any other host
// fail, so a test never touches the internet.
//
// Close every discordgo session before closing the Server: a session whose
// connection drops reconnects forever (discordgo's ShouldReconnectOnError),
// and its goroutines would outlive the test. For the same reason tests set
// ShouldReconnectOnError to false unless they test reconnects (see
// [Server.NewSession]).
package discordtest
