// Package voterewards polls a Top.gg project's vote history and rewards every vote
// once, across restarts and crashes, without a public webhook server.
//
// A [Poller] reads the history from now minus a lookback (12 hours by default, never
// more than one year), follows the service's cursor to the end, then polls every
// interval from where it stopped. When the service refuses a saved cursor, or gives
// none, a poll starts from the newest vote it saw minus a small overlap and goes on
// from the newest vote of each page; the votes read twice are dropped by their dedup
// key (user id, created_at), carried in [Vote.Key]. A poll never sends the same
// request twice, so no answer of the service can make it loop.
//
// Delivery is at least once and, unless the process dies between a handler's return
// and the write that records it, exactly once: new votes are written to the [Store]
// as pending together with the new cursor, in one transaction, before any handler
// sees them; a vote is marked delivered only after [Config.OnReward] returns nil.
// A failing or panicking handler is retried with backoff and finally reported to
// [Config.OnGiveUp]. Handlers run on a bounded pool (4 by default) and the votes of
// one user are handled one at a time, oldest first.
//
// When a delivered vote's expires_at passes, [Config.OnExpire] is called once
// (e.g. to take a voter role back); pending expiries are stored and late ones fire
// at the next start.
//
// [Poller.Active] answers from memory, without a request, whether a user has an
// active vote, once the poller has read the whole vote window.
//
// The default store, [OpenStore], keeps its state in one bbolt file in a directory;
// it survives kill -9 at any point and refuses a second process with [ErrLocked].
// [NewMemoryStore] keeps the state in memory, for tests and throwaway runs.
//
// The package does not depend on discordgo; any Go service can use it.
package voterewards
