// Package shards opens and closes a discordgo bot's shard sessions under a
// context, and makes every Discord REST call of those sessions honour its
// context and read a bounded body.
//
// Why a bot author needs it: the rest of the module works under contexts,
// but discordgo (v0.29) takes none in Open, sleeps through a 429 without
// looking at one (time.Sleep, holding the route's lock), and reads whole
// whatever body Discord sends. Without this package a bot cannot stop while a
// shard connects, and a reward handler's role grant outlives the shutdown
// that cancelled it. The example bot opens its shards with it; the plugin and
// autopost take any discordgo session.
//
//   - [New] makes one session per shard (token, shard pair, intents, and an
//     HTTP client and websocket dialer of this package);
//   - [Group.Open] connects them in order and returns when every shard has its
//     READY, or at once when its context is done (a silent gateway, a
//     gateway lookup Discord never answers or rate-limits for a minute);
//   - [Group.Close] closes them all at once and refuses reconnections;
//   - every REST request of the sessions goes through a transport that waits
//     out Discord's rate limits (429 Retry-After, an exhausted bucket, the
//     global limit) inside the request, where the request's context can end
//     the wait, instead of in discordgo's sleeps; and that fails a response
//     body longer than a bound (8 MiB by default) with a [*BodyTooLargeError].
//
// A REST call honours cancellation when it is given the context:
//
//	err := s.GuildMemberRoleAdd(guildID, userID, roleID, discordgo.WithContext(ctx))
//
// Calls made without one are still bounded by the client's timeout, which
// bounds every wait too. discordgo serialises the calls of one route (its
// bucket's lock, taken before the request): a call queued behind another
// call's rate-limit wait goes on when that wait ends, by its time or by the
// other call's context.
//
// The sessions keep discordgo's defaults otherwise, State included. A bot
// that reads nothing of State (counts from the events, shard from the guild
// ID) should set StateEnabled to false before Open: at 100,000 guilds over 16
// shards, State is about 200 MiB of the example bot's 250 MiB.
package shards
