// Package redisstate keeps all of a bot's state in Redis for a fleet: votes
// and ledger, command hash, reminder opt-ins, one [voterewards.State] and
// [voterewards.Feed] in the bot's key space ([fleet.Key]: one hash slot on
// Cluster), so an existing fleet's data is kept.
//
// Each method is one Lua script or one read, atomic and as durable as
// Redis's persistence (run it with AOF); the dedup rule and the ledger run
// inside the ingest script, so concurrent ingests add one vote once. The feed
// is pub/sub: every process learns each added vote in Ingest order, and
// resyncs after a reconnect. The opt-ins of the example bot's earlier set,
// Key(bot, "set:reminders"), count as opted in with no reminder sent.
//
// Any process reads, ingests webhook votes and sets a reminder choice. The
// leader's writes (Ingest with a checkpoint, Delivered, Expired, Prune,
// SaveHash, Reminded) are fenced by the fleet's lease ([State.UseFence]),
// atomically with the write: [fleet.ErrFenced] once a newer term exists,
// [fleet.ErrNoFence] while this process holds none.
//
// # Failover
//
// Writes are not waited for, so a failover can undo the writes the promoted
// replica had not received. It holds a prefix of the old master's writes, so
// no vote is lost (the next term's poll ingests it again), but a reward
// recorded in the undone writes is given once more, at most once per
// failover. A handler that must not repeat uses the vote's Key as an
// idempotency key, as it does for a process that dies before the record.
package redisstate
