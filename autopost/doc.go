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
// GUILD_DELETE costs O(1) time and, once the shard's guild map has grown to
// size, no allocation.
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
// Detaching a session (the function [Poster.Attach] returns) takes its
// guilds out of the counts at once; the following posts carry the counts of
// the shards still attached. In v1 that is a partial server_count, the sum
// over those shards only, and a warning is logged; in v0 it is the stats of
// each shard still attached, with its shard_id. Once no attached shard is
// ready (every session detached, say), nothing is posted: a server_count of 0
// would wipe the listing's. Each attempt is then reported as a skipped
// [Result], and the numbers posted last stay the reference, so they are not
// posted again when the shards come back with the same counts.
//
// Known limitation: discordgo does not tell which gateway connection an event
// came on, so the Poster takes the session of discordgo's State when the
// handler runs. If a handler goroutine of an old session is delayed until
// after a new session (a full re-identify, not a resume) has its READY, its
// guild event is taken as the new session's, with the old session's sequence
// number. When that number is higher than the new session's, the event pins
// the guild's state (counted or not, maybe wrongly) until the new session
// sends an event for that guild with a higher sequence number, or the next
// READY. It needs a handler goroutine delayed longer than a whole reconnect
// (a new connection, a refused resume, a new IDENTIFY and its READY), so it
// is rare; setting SyncEvents on the sessions rules it out, as the handlers
// then run one after another in the order of the events.
//
// By default it posts v1 metrics (PATCH /v1/projects/@me/metrics with
// server_count and shard_count); [ModeV0] posts the legacy bot stats
// (POST /bots/:bot_id/stats) instead.
package autopost
