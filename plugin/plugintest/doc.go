// Package plugintest is a fake Discord REST API and gateway that an unmodified
// discordgo (v0.29) session connects to over real HTTP and a real websocket on
// 127.0.0.1, modelled on net/http/httptest: a bot's own tests open real
// sessions against it, next to [github.com/dblkit/go-topgg/topgg/topggtest],
// and test the bot end to end without touching the internet. It serves what a
// bot that lives on Top.gg uses, not Discord's whole API.
//
// A [Server] serves:
//
//   - the gateway: HELLO, IDENTIFY (token and shard pair checked), heartbeats
//     and their ACKs, READY followed by one GUILD_CREATE per available guild of
//     the shard, RESUME with replay of missed dispatches, and on demand
//     GUILD_CREATE / GUILD_DELETE (joined, removed, outage, back from outage)
//     and INTERACTION_CREATE for a registered slash command;
//   - the REST endpoints the module uses, under /api/v9 (and /api/v10): the
//     gateway URL, the bot user, the application, application commands,
//     member roles, interaction callbacks and their follow-ups. Every request
//     is recorded; an unknown endpoint answers 404 like Discord does.
//
// A guild belongs to shard (guild_id >> 22) % shard_count, as on Discord;
// [GuildIDForShard] makes IDs that land on a chosen shard.
//
// Sessions made by [Server.NewSession] (or configured with [Server.HTTPClient]
// and [Server.Dialer]) can only reach this server: requests to any other host
// fail, so a test never touches the internet.
//
// Close every discordgo session before closing the Server: a session whose
// connection drops reconnects forever (discordgo's ShouldReconnectOnError),
// and its goroutines would outlive the test.
package plugintest
