// Package autopost keeps a Discord bot's server and shard counts on its Top.gg
// listing.
//
// Two parts: a [Counter] counts, a [Poster] posts. For one process, the
// common case, the Poster makes its own Counter:
//
//	poster, err := autopost.New(client, autopost.Config{})
//	detach, err := poster.Attach(sessions...) // before the sessions open
//	err = poster.Run(ctx)                     // blocks until ctx is done
//
// The Counter ([Counter.Attach]) counts guilds from the
// gateway events READY, GUILD_CREATE and GUILD_DELETE, not from discordgo's
// State, which drops a guild during an outage:
//
//   - a guild listed in READY counts, even as an unavailable stub;
//   - GUILD_CREATE of a guild not yet known is a join; the lazy GUILD_CREATE
//     that follows READY, and the one that ends an outage, change nothing;
//   - GUILD_DELETE with unavailable set is an outage: the guild still counts;
//     without it, the bot was removed and the guild no longer counts;
//   - a new READY (a new gateway session, not a resume) replaces the shard's
//     guild set.
//
// When a bot's shards run in several processes, each process counts its own
// shards with a Counter and publishes [Counter.AppendShards]; the process
// that posts gives its Poster a [Source] (Config.Source) that adds them up.
// Whatever the Source, the Poster never posts a total that misses shards.
//
// discordgo runs each handler in its own goroutine unless SyncEvents is set, so
// the events of one connection reach the Counter in any order. The Counter orders
// them by their gateway sequence number, per guild, and holds back the events
// that overtake their session's READY until that READY is applied: the count is
// the same whatever order the handlers ran in.
//
// [Poster.Run] posts the counts once every shard has its READY, then every
// [Config.Interval]; while some shard has not reported nothing is posted: a
// partial server_count would replace the listing's exact one, and one of 0
// would wipe it.
//
// Known limitation: discordgo does not say which gateway connection an
// event came on, so the Counter takes the session of discordgo's State when
// the handler runs. A handler goroutine of an old session delayed past a new
// session's READY (longer than a whole re-identify) is taken as the new
// session's, with the old sequence number, and may pin its guild's state
// until a later event for that guild or the next READY. Setting SyncEvents on
// the sessions rules it out.
//
// It posts v1 metrics by default, legacy v0 stats with [ModeV0].
package autopost
