// Package pgstore keeps a bot's state ([voterewards.State]: the votes and
// their ledger, the command hash, the reminder opt-ins) in PostgreSQL
// (through pgx), so that a bot's rewards can be rows of its own database,
// written in the same transaction as the vote's done mark.
//
// [Open] returns a [Store]: a [voterewards.State] and a [voterewards.Feed],
// shared by every process of a fleet. Its tables live in a schema of their
// own (default "topgg"), migrated when a newer version of this package opens
// an older schema; a schema newer than the code is [ErrSchemaTooNew]. The
// ledger is updated in the transaction that admits a vote; a process keeps
// the ledgers it wrote last (up to 16,384 voters) so that a webhook vote
// takes one round trip, a write the database refuses if one changed since.
// The votes table
// grows by one row per vote (sizes in BENCHMARKS.md) until [Config.Retention]
// deletes those handled and older than it; the ledger stays whole.
//
// # Exactly once, or at least once
//
// Exactly once: a handler made by [Store.Reward] or [Store.Expiry] writes
// through the transaction that also marks the vote done, so its writes
// happen once per vote through any crash, restart or change of leader.
//
// At least once: a plain [voterewards.Handler], and whatever a TxHandler does
// outside its transaction (a Discord role, a DM), runs again if the process
// dies between its return and the record of it.
//
// # Fleets
//
// Processes that share the database share one store: dedup is done in the
// database, new votes reach every process's Follow by LISTEN/NOTIFY, and with
// the lease's fence ([Store.UseFence]) every leader write checks in its own
// transaction that no newer leader has written ([ErrFenced]).
//
// A new term raises the fence at its first action, before anything else; it
// waits for the older term's open transactions, and from then on every write
// of an older term is refused. [Config.TxTimeout], cut to what is left of
// the term, bounds how long a stopped leader can hold up the next:
// PostgreSQL aborts its idle transaction,
// rolling back its handler's writes, and the new leader rewards those votes
// once. A write of the older term that checked the fence before the raise
// may still commit, ordered before the whole new term: each vote stays
// rewarded exactly once, only late.
package pgstore
