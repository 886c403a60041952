// Package voterewards turns a Top.gg project's votes into reward (and expiry)
// calls, once per vote, across restarts and crashes, from two sources merged
// into one stream: the vote history, polled by cursor ([Poller.Run]), and
// webhooks ([Poller.IngestWebhook] as a webhook.Receiver's OnVote, or
// [Poller.Ingest] for votes of any origin).
//
// [Poller.Run] is the job: it delivers what an earlier run left pending,
// polls the history every [Config.Interval] and delivers new votes until its
// context is done, then lets handlers finish for [Config.GracePeriod] (and
// [CancelWait] after cancelling them). Every timer runs on one injectable
// clock.
//
// Polled and webhook votes enter one [Store], which keeps one record per vote
// (see [DedupWindow]): the first stored, whose [Vote.Origin] says which source
// it was. Ingest returns once the votes are durable (a receiver answers 2xx
// only then), whether or not Run is running; [Poller.Active] knows them at
// once. In a fleet, a Store that implements [Feed] tells every process of the
// votes the others added, and [Poller.Mirror] keeps Active current in
// processes that do not run delivery.
//
// # Delivery guarantee
//
// At least once, and exactly once unless the process dies between a
// handler's return and the store write that records it (then the handler is
// called again for that vote, with the same [Vote.Key], after the restart;
// at most [Config.Concurrency] votes are in that window at a time):
//   - a vote is stored as pending before any handler sees it;
//   - it is recorded delivered only after [Config.OnReward] returned nil;
//   - a handler that fails or panics is retried (MaxAttempts calls, RetryDelay
//     doubling); one that fails every attempt goes to [Config.OnGiveUp] and
//     stays pending for the next Run or [Poller.Redeliver], never recorded as
//     done;
//   - an expiry ([Config.OnExpire]) is scheduled only for a delivered reward,
//     fires once after its ExpiresAt (late ones at the next Run), and follows
//     the same rules;
//   - one user's calls never overlap and come oldest first.
//
// # Inputs that cannot stall it
//
// A created_at in the future is clamped to the local clock plus a minute, a
// missing or impossible expires_at becomes created_at plus [VoteLifetime],
// weights are kept within [1, 10], a vote without ids is skipped, each
// logged; a poll round ends at the first page that adds nothing, never sends
// the same request twice, and reads a bounded number of pages.
//
// # Stores
//
// [OpenStore] keeps the state in one bbolt file that survives kill -9,
// refuses a second process ([ErrLocked]) and refuses a damaged file with a
// *[DamagedStoreError], never a crash. [NewMemoryStore] keeps it in memory.
// Package storetest is the suite every Store passes.
//
// The package does not depend on discordgo; any Go service can use it.
package voterewards
