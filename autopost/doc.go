// Package autopost keeps a Discord bot's server and shard counts on its Top.gg
// listing.
//
// A [Poster] is attached to the bot's discordgo sessions (one per shard, all in
// this process) before they open. It counts guilds from the gateway events
// READY, GUILD_CREATE and GUILD_DELETE, not from discordgo's State, which drops
// a guild during an outage:
//
//   - a guild listed in READY counts, even as an unavailable stub;
//   - GUILD_CREATE of a guild not yet known is a join; the lazy GUILD_CREATE
//     that follows READY, and the one that ends an outage, change nothing;
//   - GUILD_DELETE with unavailable set is an outage: the guild still counts;
//     without it, the bot was removed and the guild no longer counts;
//   - a new READY (a new gateway session, not a resume) replaces the shard's
//     guild set.
//
// discordgo runs each handler in its own goroutine unless SyncEvents is set, so
// the events of one connection reach the Poster in any order. The Poster orders
// them by their gateway sequence number, per guild, and holds back the events
// that overtake their session's READY until that READY is applied: the count is
// the same whatever order the handlers ran in. Each GUILD_CREATE and
// GUILD_DELETE costs O(1) time and no allocation.
//
// [Poster.Run] then posts the counts: first as soon as every attached shard has
// its READY (or [Config.ReadyTimeout] has passed), then every
// [Config.Interval]. It skips a post whose numbers have not changed since the
// last one, unless [Config.Refresh] has passed; it waits out a 429's
// Retry-After; it backs off after other failures and never gives up on a
// service error. While Top.gg cannot be reached it keeps one timestamped
// sample per interval and sends them in one metrics batch when the service is
// back, before the current numbers.
//
// By default it posts v1 metrics (PATCH /v1/projects/@me/metrics with
// server_count and shard_count); [ModeV0] posts the legacy bot stats
// (POST /bots/:bot_id/stats) instead.
package autopost
