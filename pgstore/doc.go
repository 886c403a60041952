// Package pgstore keeps a bot's state ([voterewards.State]: the votes and
// their ledger, the command hash, the reminder opt-ins) in PostgreSQL
// (through pgx), so that a bot's rewards can be rows of its own database,
// written in the same transaction as the vote's done mark.
//
// [Open] returns a [Store]: a [voterewards.State] and a [voterewards.Feed],
// shared by every process of a fleet. It creates its tables in a schema of their own (default
// "topgg") and migrates them when a newer version of this package opens an
// older schema; a schema newer than the code is an error ([ErrSchemaTooNew]).
// Every vote is kept; the dedup set is the votes not yet pruned; the ledger
// (each voter's [voterewards.Stats], and a standing per voter per month) is
// updated in the transaction that admits a vote, so that Stats is one
// indexed read and Leaderboard one index scan.
//
// # Exactly once, or at least once
//
// Exactly once (Reward, Expiry): a handler made by [Store.Reward] or
// [Store.Expiry] writes through the store's transaction, which also marks the
// vote done, so its writes happen once per vote through any crash, restart
// or change of leader.
//
// At least once (any other handler): a plain [voterewards.Handler], and
// whatever a TxHandler does outside its transaction (a Discord role, a DM),
// runs again if the process dies between its return and the record of it.
//
// # Fleets
//
// Processes that share the database share one store: dedup is done in the
// database (each voter's Ingests run one after the other, under a lock), new
// votes reach every process's Follow by LISTEN/NOTIFY, and with the lease's
// fence ([Store.UseFence]) every leader write checks in its own transaction
// that no newer leader has written ([ErrFenced]); a store without a fence is
// for one process.
//
// A new term raises the fence at its first action (the Poller's Load, or
// any leader write), in a transaction of its own, before anything else: from
// then on every write of an older term is refused, though the new leader has
// written nothing yet. The raise waits for the older term's open
// transactions (each holds the fence row's share lock to its commit).
//
// [Config.TxTimeout] (in a fleet: about the lease's TTL) bounds how long a
// leader that stops (a GC pause, SIGSTOP, a frozen VM) can hold up the next:
// PostgreSQL aborts a transaction idle for longer, rolling back its
// handler's writes and releasing its locks (the votes it was rewarding, the
// voters it was ingesting, the fence row), and every lock wait fails after
// as long. The aborted votes are rewarded once, by the new leader.
//
// What remains (the window): a write of the older term can still commit
// after the lease passed on, if it checked the fence before the new term's
// raise (between the lease's change and the new leader's first action, or
// while the raise waits) and, if its process stopped in the middle of it,
// resumed within TxTimeout. Such a write is ordered before the whole new term
// (the raise waited for it), so each vote stays rewarded exactly once; it is
// only late. A write that reaches PostgreSQL after the raise is refused. A
// vote a leader was rewarding when it stopped waits up to TxTimeout for the
// next leader.
package pgstore
