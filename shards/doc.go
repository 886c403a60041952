// Package shards opens and closes a discordgo bot's shard sessions under a
// context, and makes every Discord REST call of those sessions honour its
// context and read a bounded body.
//
// discordgo (v0.29) takes no context in Open, sleeps through a 429 without
// looking at one, and reads whole whatever body Discord sends; without this
// package a bot cannot stop while a shard connects.
//
// [New] makes one session per shard; [Group.Open] and [Group.Close] open and
// close them. Every REST request waits out Discord's rate limits where its
// context can end the wait, and fails a body over 8 MiB with
// [ErrBodyTooLarge]. A call honours cancellation when given the context:
//
//	err := s.GuildMemberRoleAdd(guildID, userID, roleID, discordgo.WithContext(ctx))
//
// Calls without one are bounded by the client's timeout. A bot that reads
// nothing of discordgo's State should set StateEnabled to false before Open,
// to save most of its memory (see BENCHMARKS.md).
package shards
