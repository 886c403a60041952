// Package voterewards turns a Top.gg project's votes into reward (and expiry)
// calls, once per vote, across restarts and crashes, from two sources merged
// into one stream: the vote history, polled by cursor ([Poller.Run]), and
// webhooks ([Poller.IngestWebhook] as a webhook.Receiver's OnVote, or
// [Poller.Ingest] for votes of any origin). Every timer runs on one
// injectable clock.
//
// Both sources enter one [Store], which keeps one record per vote (see
// [DedupWindow]): the first stored, whose [Vote.Origin] names its source.
// Ingest returns once the votes are durable (a receiver answers 2xx only
// then), whether or not Run is running. In a fleet, a Store that implements
// [Feed] tells every process of the votes the others added.
//
// # Delivery guarantee
//
// At least once, and exactly once unless the process dies between a
// handler's return and the store write that records it (then the handler is
// called again for that vote, with the same [Vote.Key], after the restart;
// at most [Config.Concurrency] votes are in that window at a time):
//   - a vote is stored as pending before any handler sees it;
//   - it is recorded delivered only after [Config.OnReward] returned nil;
//   - a failing or panicking handler is retried, then given up on
//     ([Config.OnGiveUp]) and left pending, never recorded as done;
//   - an expiry ([Config.OnExpire]) is scheduled only for a delivered reward,
//     fires once after its ExpiresAt (late ones at the next Run), and follows
//     the same rules;
//   - one user's calls never overlap and come oldest first.
//
// # The ledger
//
// Every [Store] keeps, per voter (the PlatformID, else the UserID), a
// [Stats]: the votes and their weighted total, the current and the best
// streak, the newest vote's UTC month and its votes and total, and the last
// vote. It is updated by one rule, [Stats.Add], in the atomic step that
// admits the vote, and handed to the handler with the vote ([Vote.Stats]).
// [Poller.Stats] reads a voter's in one store read; [Poller.Leaderboard] the
// top voters of a UTC month or of all time. The stores of this package keep
// bounded state per voter, never a list of their votes.
//
// A streak is a run of votes, each made no later than the previous vote's
// ExpiresAt (when the user could vote again) plus the streak grace
// ([Config.StreakGrace], default [DefaultStreakGrace]: a day), so voting
// once a day, at any hour, keeps it. A vote at exactly that instant
// (Stats.StreakUntil) continues the streak; a vote one nanosecond later
// starts a new streak of 1. [Stats.CurrentStreak] is 0 once StreakUntil
// passed without a vote. The edge cases:
//   - A weekend vote (Weight 2) counts 2 in Total and in the month's total,
//     and 1 in Votes and in the streak.
//   - A vote seen twice (a delivery repeated, or the history's and a
//     webhook's records of one vote: see [DedupWindow]) is one vote,
//     counted once, when its first record is admitted.
//   - A late vote (one older than the voter's last vote: the history
//     delivering a vote that a webhook missed, after a newer one) counts in
//     Votes, Total, and its own month and that month's leaderboard, but
//     leaves the streak, StreakUntil and LastVote as they are: streaks are
//     reckoned in the order votes are admitted.
//   - Months are UTC calendar months, whatever the bot's time zone: a vote
//     at 23:59:59.999999999 on March 31 is March's, one at 00:00 on April 1
//     April's. A streak goes on across months.
//   - Ties on a leaderboard go to who reached the total first (the earlier
//     newest vote of the span), then to the lower user id
//     ([CompareStandings]).
//   - [Store.Prune] bounds the dedup set, never the ledger: totals and
//     leaderboards cover every vote ever admitted.
//
// Odd inputs (future or missing times, weights out of range, a vote without
// ids, a service that repeats or loops pages) are clamped, skipped or ended
// and logged; they never stall a poll.
//
// The package does not depend on discordgo; any Go service can use it.
package voterewards
