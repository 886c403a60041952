// Package redisstate keeps all of a bot's state in Redis for a fleet: votes
// and ledger, command hash, reminder opt-ins, one [voterewards.State] and
// [voterewards.Feed] in the bot's key space ([fleet.Key]: one hash slot on
// Cluster), so an existing fleet's data is kept.
//
// Each method is one Lua script or one read, atomic and as durable as
// Redis's persistence (run it with AOF); the dedup rule runs inside the
// ingest script, so concurrent ingests add one vote once, and so does the
// ledger (a hash field per voter, sorted sets per month and for all time).
// The feed is pub/sub: every process learns each added vote in Ingest order
// within moments, and resyncs after a reconnect. The opt-ins of the example
// bot's earlier set, Key(bot, "set:reminders"), count as opted in with no
// reminder sent, and move to the hash on their next change.
//
// Any process reads, ingests webhook votes and sets a reminder choice. The
// leader's writes (Ingest with a checkpoint, Delivered, Expired, Prune,
// SaveHash, Reminded) are fenced by the fleet's lease ([State.UseFence]),
// inside Redis and atomically with the write: [fleet.ErrFenced] once a newer
// term exists, [fleet.ErrNoFence] while this process holds none.
//
// # Failover
//
// Writes are not waited for. A failover can undo the writes the old
// master acknowledged and the promoted replica had not received: those of the
// replication lag (about a round trip on a healthy link), or all since the
// link broke if the promoted replica had been cut off (min-replicas-max-lag
// bounds that). The promoted replica holds a prefix of the old master's
// writes, so no vote is lost: a vote it lacks is after the poll checkpoint it
// holds, and the next term's poll ingests it again. But a vote whose reward
// was recorded (delivered mark) in the undone writes is rewarded once more, by
// the next term. That is the bound: the rewards recorded in the undone writes,
// each repeated at most once per failover. A handler that must not repeat
// uses the vote's Key as an idempotency key, as it does for the process that
// dies between its handler's return and the mark.
package redisstate
