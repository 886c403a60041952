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
// Odd inputs (future or missing times, weights out of range, a vote without
// ids, a service that repeats or loops pages) are clamped, skipped or ended
// and logged; they never stall a poll.
//
// The package does not depend on discordgo; any Go service can use it.
package voterewards
