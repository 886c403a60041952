package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/voterewards"
)

// TxHandler handles a vote inside the store's transaction: its writes
// through tx commit together with the vote's done mark, or not at all. It
// must not commit or roll back tx, should do nothing outside the database
// that a retry would repeat, and must return within [Config.TxTimeout]:
// PostgreSQL aborts a transaction idle for longer (the commit then fails and
// the vote is retried).
type TxHandler func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error

// Reward returns a [voterewards.Handler] (for voterewards.Config.OnReward)
// that rewards each vote exactly once, through crashes, restarts and leader
// changes: in ONE transaction it locks the vote's row and marks the reward
// done, checks the fence ([Store.UseFence]; fenced, h is not called), returns
// nil at once if the reward was already done, calls h and commits. If h fails (or panics) its
// writes roll back and the Poller retries it later. The Poller's
// [Store.Delivered] that follows is idempotent with the mark, so a crash
// between the commit and Delivered never calls h twice.
//
// Exactly once (Reward, Expiry): h's database writes and the done mark are
// one transaction. At least once (any other handler, and anything h does
// outside tx): a crash between the handler's return and Delivered calls it
// again.
//
// Reward(nil) returns nil, which voterewards.New refuses (OnReward is
// required), rather than a handler that fails every vote.
func (s *Store) Reward(h TxHandler) voterewards.Handler {
	return s.txHandler("reward", h, func(q *queries) string { return q.markReward })
}

// Expiry is [Store.Reward] for voterewards.Config.OnExpire: each vote's
// expiry is handled exactly once, with the same transaction. Expiry(nil)
// returns nil.
func (s *Store) Expiry(h TxHandler) voterewards.Handler {
	return s.txHandler("expiry", h, func(q *queries) string { return q.markExpiry })
}

// txHandler makes the handler of Reward and Expiry; mark picks the query
// that locks and marks the vote, returning its previous mark. The fence is checked before h: its
// share lock, held to the commit, makes a newer leader wait for this
// transaction, so checking first is as safe as checking last, and a fenced
// process does not run h.
func (s *Store) txHandler(op string, h TxHandler, mark func(*queries) string) voterewards.Handler {
	if h == nil {
		return nil // refused where it is given: voterewards.New requires a handler
	}
	return func(ctx context.Context, v voterewards.Vote) error {
		if err := s.made(); err != nil {
			return err
		}
		tok, fenced, err := s.leaderToken(ctx)
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			b.Queue(s.q.txLimits, s.limit)
			var done bool
			found := false
			b.Queue(mark(&s.q), v.Key()).QueryRow(func(row pgx.Row) error {
				err := row.Scan(&done)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				found = err == nil
				return err
			})
			if fenced {
				b.Queue(s.q.checkFence, tok)
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			switch {
			case !found:
				return fmt.Errorf("%w: %s", ErrUnknownVote, v.Key())
			case done:
				return errSkip // roll back the (repeated) mark
			}
			if err := h(ctx, tx, v); err != nil {
				return &handlerError{err}
			}
			return nil
		})
		var he *handlerError
		switch {
		case err == nil, errors.Is(err, errSkip):
			return nil
		case errors.As(err, &he):
			return he.err // the handler's own error, as it returned it
		default:
			return s.wrap(op+" of vote "+v.Key(), err)
		}
	}
}

// errSkip rolls back the transaction of a vote already handled.
var errSkip = errors.New("already done")

// handlerError carries a TxHandler's error out of the transaction unchanged.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }
func (e *handlerError) Unwrap() error { return e.err }
