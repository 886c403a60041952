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
// The Counter counts guilds from the gateway events READY, GUILD_CREATE and
// GUILD_DELETE, not from discordgo's State, which drops a guild in an outage:
//
//   - a guild listed in READY counts, even as an unavailable stub;
//   - GUILD_CREATE of a guild not yet known is a join; the lazy GUILD_CREATE
//     that follows READY, and the one that ends an outage, change nothing;
//   - GUILD_DELETE with unavailable set is an outage: the guild still counts;
//     without it, the bot was removed and the guild no longer counts;
//   - a new READY (a new gateway session, not a resume) replaces the shard's
//     guild set.
//
// The count is the same whatever order discordgo's handler goroutines run in.
// When a bot's shards run in several processes, each counts its own with a
// Counter and the poster's [Source] adds them up. [Poster.Run] posts once
// every shard has its READY, then every [Config.Interval]; it never posts a
// total that misses shards, as a partial server_count would replace the
// listing's exact one.
//
// Known limitation: discordgo does not say which connection an event came on.
// A handler goroutine of an old session delayed past a whole re-identify may
// pin its guild's state until that guild's next event or the next READY;
// setting SyncEvents on the sessions rules it out.
//
// It posts v1 metrics by default, legacy v0 stats with [ModeV0].
package autopost
