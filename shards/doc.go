// Package shards opens and closes a discordgo bot's shard sessions under a
// context, and makes every Discord REST call of those sessions honour its
// context and read a bounded body.
//
// Why a bot author needs it: discordgo (v0.29) takes no context in Open,
// sleeps through a 429 without looking at one (time.Sleep, holding the
// route's lock), and reads whole whatever body Discord sends. Without this
// package a bot cannot stop while a shard connects, and a reward handler's
// role grant outlives the shutdown that cancelled it. The example bot uses
// it; the plugin and autopost take any discordgo session.
//
// [New] makes one session per shard; [Group.Open] and [Group.Close] open and
// close them. Every REST request waits out Discord's rate limits where its
// context can end the wait, and fails a body over 8 MiB with a
// [*BodyTooLargeError]. A call honours cancellation when given the context:
//
//	err := s.GuildMemberRoleAdd(guildID, userID, roleID, discordgo.WithContext(ctx))
//
// Calls without one are bounded by the client's timeout. discordgo serialises
// the calls of one route: a call queued behind another's rate-limit wait goes
// on when that wait ends.
//
// A bot that reads nothing of discordgo's State should set StateEnabled to
// false before Open: at 100,000 guilds over 16 shards, State is about 200 MiB
// of the example bot's 250 MiB.
package shards
