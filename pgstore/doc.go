// Package pgstore keeps the vote pipeline of
// [github.com/dblkit/go-topgg/voterewards] in PostgreSQL (through pgx), so
// that a bot's rewards can be rows of its own database, written in the same
// transaction as the vote's done mark.
//
// [Open] returns a [Store]: a [voterewards.Store] (pass it as
// voterewards.Config.Store) and a [voterewards.Feed], shared by every process
// of a fleet. It creates its tables in a schema of their own (default
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
// votes reach every process's Follow by LISTEN/NOTIFY, and with
// [Config.Fence] set to the lease's token every leader write checks in its
// own transaction that no newer leader has written ([ErrFenced]).
package pgstore
