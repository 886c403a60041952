// Package voterewards turns a Top.gg project's votes into reward (and expiry)
// calls, once per vote, across restarts and crashes, from two sources merged
// into one stream: the vote history, polled by cursor ([Poller.Run]), and
// webhooks, handed in by a receiver ([Poller.IngestWebhook] as a webhook.Receiver's
// OnVote, or [Poller.Ingest] for votes of any origin).
//
// # One lifecycle
//
// [Poller.Run] is the job: it loads the [Store], delivers what an earlier
// run left pending, polls the history every [Config.Interval] and delivers
// new votes until its context is done; then it lets running handlers finish
// for [Config.GracePeriod], cancels their context, and returns once every
// handler call has returned, or [CancelWait] later without a handler that
// ignores its context (its outcome is dropped). It may be called again after it returned (a
// fleet runs it each time it wins the lease); a concurrent second call
// returns [topgg.ErrRunning]. Every timer (interval, retries, expiries, pruning,
// grace) runs on one injectable clock.
//
// # One vote stream
//
// Polled and webhook votes enter the same Store, which keeps one record per
// vote: two records of the same voter (PlatformID, else UserID) whose
// created_at differ by less than [DedupWindow] (11 hours) are one vote, the
// one stored first; its [Vote.Origin] says which source that was, and
// [Vote.Hook] carries the webhook's id and query. This merges the history's
// record (no id, 6 fractional digits, Z), the v1 webhook's (an id, 7 digits,
// +00:00) and the v0 webhook's (no timestamp: the receipt time), and makes a
// replayed delivery a duplicate. The rule is sound because a user cannot vote
// again before their vote expires (12 hours); see [DedupWindow]. The Store
// applies it atomically, so concurrent Ingest calls of one vote add it once.
//
// Ingest returns once the votes are durably stored (a receiver answers 2xx
// only then), whether or not Run is running: [Poller.Active] knows them at
// once, and the running Run delivers them at once. In a fleet, a Store that
// implements [Feed] tells every process of the votes the others added: Run
// delivers them within moments, and [Poller.Mirror] keeps Active current in
// processes that do not run delivery.
//
// # Delivery guarantee
//
// At least once, and exactly once unless the process dies between a
// handler's return and the store write that records it (then the handler
// is called again for that vote, with the same [Vote.Key], after the
// restart; at most [Config.Concurrency] votes are in that window at a time).
// Precisely:
//   - a vote is stored as pending before any handler sees it;
//   - it is recorded delivered only after [Config.OnReward] returned nil;
//   - a handler that fails or panics is retried (MaxAttempts calls, RetryDelay
//     doubling); one that fails every attempt is reported to
//     [Config.OnGiveUp] and stays pending: it is delivered again by the next
//     Run or by [Poller.Redeliver] (and by nothing else: not by the store's
//     feed echoing the vote, nor by a resync), never silently recorded as
//     done;
//   - an expiry ([Config.OnExpire]) is scheduled only for a delivered
//     reward, fires once after its ExpiresAt (late ones at the next Run),
//     and follows the same rules;
//   - one user's calls never overlap and come oldest first.
//
// # Inputs that cannot stall it
//
// No answer of the service stops or spins the pipeline: a created_at in the
// future is clamped to the local clock plus a minute, a missing or
// impossible expires_at becomes created_at plus [VoteLifetime], weights are
// kept within [1, 10], a vote without ids is skipped, each logged;
// a poll round ends at the first page that adds nothing (whatever its
// cursor), never sends the same request twice, and reads a bounded number
// of pages; the next round comes after the interval.
//
// # Stores
//
// [OpenStore] keeps the state in one bbolt file in a directory; it survives
// kill -9 at any point, refuses a second process with [ErrLocked], and checks
// the file before trusting it: a damaged file is a *[DamagedStoreError]
// naming it, never a crash. [NewMemoryStore] keeps the state in memory (tests,
// throwaway runs; several Pollers sharing one behave as a fleet). Package
// storetest is the suite every Store passes.
//
// The package does not depend on discordgo; any Go service can use it.
package voterewards
