// Package voterewards turns a Top.gg project's votes into reward (and expiry)
// calls, once per vote, across restarts and crashes, from two sources merged
// into one stream: the vote history, polled by cursor ([Poller.Run]), and
// webhooks ([Poller.IngestWebhook] as a webhook.Receiver's OnVote, or
// [Poller.Ingest] for votes of any origin).
//
// Both sources enter one [Store], which keeps one record per vote (see
// [DedupWindow]), the first stored. Ingest returns once the votes are durable,
// whether or not Run is running. In a fleet, a Store that implements [Feed]
// tells every process of the votes the others added.
//
// # Delivery guarantee
//
// At least once, and exactly once unless the process dies between a
// handler's return and the store write that records it (then the handler is
// called again with the same [Vote.Key] after the restart):
//   - a vote is stored as pending before any handler sees it;
//   - it is recorded delivered only after [Config.OnReward] returned nil;
//   - a failing or panicking handler is retried, then given up on
//     ([Config.OnGiveUp]) and left pending, never recorded as done;
//   - once a store write fails, no handler call starts until the store
//     answers: a failover or outage repeats at most the [Config.Concurrency]
//     calls in flight; a call that met the outage ([ErrStoreFailed]) is no
//     attempt, and the same Run delivers it again once the store answers;
//   - an expiry ([Config.OnExpire]) follows the same rules, for a delivered
//     reward only, once, after its ExpiresAt (late ones at the next Run);
//   - one user's calls never overlap and come oldest first.
//
// # The ledger
//
// Every [Store] keeps a [Stats] per voter (the PlatformID, else the UserID),
// updated by one rule, [Stats.Add], in the atomic step that admits the vote,
// and handed to the handler with it ([Vote.Stats]). [Store.Stats] reads a
// voter's; [Store.Leaderboard] the top voters of a UTC month or of all time.
// The stores keep bounded state per voter, never a list of their votes.
//
// A streak is a run of votes, each made no later than the previous vote's
// ExpiresAt plus the streak grace ([Config.StreakGrace], default a day), so
// voting once a day, at any hour, keeps it. The edge cases:
//   - A weekend vote (Weight 2) counts 2 in Total and the month's total, 1 in
//     Votes and in the streak.
//   - A vote seen twice (see [DedupWindow]) is counted once.
//   - A late vote (older than the voter's last) counts in Votes, Total and its
//     own month, but leaves the streak and LastVote as they are.
//   - Months are UTC calendar months; a streak goes on across months.
//   - Ties on a leaderboard go to who reached the total first, then to the
//     lower user id ([CompareStandings]).
//   - [Store.Prune] bounds the dedup set, never the ledger; an expired vote
//     the history sends again from before the set's window is skipped as a
//     replay, whatever the lookback or the store's retention.
//
// Odd inputs (future or missing times, weights out of range, a vote without
// ids, a service that repeats or loops pages) are clamped, skipped or ended
// and logged; they never stall a poll.
//
// The package does not depend on discordgo; any Go service can use it.
package voterewards
