// Package discordtest is a fake Discord for testing a discordgo bot end to
// end, without the internet or a token: an unmodified discordgo (v0.29)
// session connects to it over real HTTP and websocket on 127.0.0.1. It
// follows topggtest's httptest convention ([NewServer], [Server.Client],
// [Server.Close], [Server.Inject] ...) and serves what a bot on Top.gg uses,
// not Discord's whole API. The package's Example (Bot) tests a bot whole: its
// sessions on two shards, a user typing /vote before and after voting on the
// fake Top.gg, the bot's answers and the role it gives.
//
// The gateway speaks HELLO, IDENTIFY, heartbeats, READY, GUILD_CREATE and
// RESUME with replay; REST records every request ([Server.Requests]) and answers
// an unknown endpoint 404. A guild belongs to shard (guild_id >> 22) %
// shard_count ([GuildIDForShard]). Close every session before the Server.
package discordtest
