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
// that a retry would repeat, and must return within [Config.TxTimeout].
type TxHandler func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error

// Reward returns the reward handler that runs h exactly once per vote through
// crashes and leader changes: h's writes through tx commit with the vote's done
// mark or roll back with h's error. What h does outside tx is at least once.
func (s *Store) Reward(h TxHandler) voterewards.Handler {
	return s.txHandler("reward", h, func(q *queries) string { return q.markReward })
}

// Expiry is [Store.Reward] for voterewards.Config.OnExpire: each expiry is
// handled exactly once. Expiry(nil) returns nil.
func (s *Store) Expiry(h TxHandler) voterewards.Handler {
	return s.txHandler("expiry", h, func(q *queries) string { return q.markExpiry })
}

// txHandler makes the handler of Reward and Expiry; mark picks the query that
// locks and marks the vote, returning its previous mark. The fence's share
// lock, held to the commit, makes a newer leader wait for this transaction,
// so checking it before h is as safe as after.
func (s *Store) txHandler(op string, h TxHandler, mark func(*queries) string) voterewards.Handler {
	if h == nil {
		return nil // refused where it is given: voterewards.New requires a handler
	}
	return func(ctx context.Context, v voterewards.Vote) error {
		tok, fenced, err := s.leaderToken(ctx)
		if err != nil {
			return fmt.Errorf("%w: %w", voterewards.ErrStoreFailed, err)
		}
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			b.Queue(s.q.txLimits, s.txLimit(ctx))
			var done bool
			found := false
			b.Queue(mark(&s.q), voterOf(v), v.CreatedAt.UnixNano()).QueryRow(func(row pgx.Row) error {
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
				if tx.Conn().IsClosed() { // the connection died under h: the store's failure
					return err
				}
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
		case errors.Is(err, ErrUnknownVote):
			return s.wrap(op+" of vote "+v.Key(), err)
		default: // the store's failure, not h's: voterewards holds the vote, no attempt counted
			return fmt.Errorf("%w: %w", voterewards.ErrStoreFailed, s.wrap(op+" of vote "+v.Key(), err))
		}
	}
}

// errSkip rolls back the transaction of a vote already handled.
var errSkip = errors.New("already done")

// handlerError carries a TxHandler's error out of the transaction unchanged.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }
func (e *handlerError) Unwrap() error { return e.err }
