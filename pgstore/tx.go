package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// TxHandler handles a vote inside the store's transaction: its writes
// through tx commit together with the vote's done mark, or not at all. It
// must not commit or roll back tx, and should do nothing outside the
// database that a retry would repeat.
type TxHandler func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error

// Reward returns a [voterewards.Handler] (for voterewards.Config.OnReward)
// that rewards each vote exactly once, through crashes, restarts and leader
// changes: in ONE transaction it locks the vote's row, returns nil at once
// if the vote's reward is already done, calls h, marks the reward done,
// checks the fence ([Config.Fence]) and commits. If h fails (or panics) its
// writes roll back and the Poller retries it later. The Poller's
// [Store.Delivered] that follows is idempotent with the mark, so a crash
// between the commit and Delivered never calls h twice.
//
// Exactly once (Reward, Expiry): h's database writes and the done mark are
// one transaction. At least once (any other handler, and anything h does
// outside tx): a crash between the handler's return and Delivered calls it
// again.
func (s *Store) Reward(h TxHandler) voterewards.Handler {
	return s.txHandler("reward", h, s.q.lockReward, s.q.markReward)
}

// Expiry is [Store.Reward] for voterewards.Config.OnExpire: each vote's
// expiry is handled exactly once, with the same transaction.
func (s *Store) Expiry(h TxHandler) voterewards.Handler {
	return s.txHandler("expiry", h, s.q.lockExpiry, s.q.markExpiry)
}

func (s *Store) txHandler(op string, h TxHandler, lock, mark string) voterewards.Handler {
	return func(ctx context.Context, v voterewards.Vote) error {
		if h == nil {
			return fmt.Errorf("pgstore: %s handler: %w (TxHandler)", op, topgg.ErrNilArgument)
		}
		tok, fenced, err := s.token()
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var id int64
			var done bool
			if err := tx.QueryRow(ctx, lock, v.Key()).Scan(&id, &done); err != nil {
				if errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("%w: %s", ErrUnknownVote, v.Key())
				}
				return err
			}
			if done {
				return nil
			}
			if err := h(ctx, tx, v); err != nil {
				return &handlerError{err}
			}
			b := &pgx.Batch{}
			b.Queue(mark, id)
			if fenced {
				b.Queue(s.q.checkFence, tok)
			}
			return tx.SendBatch(ctx, b).Close()
		})
		var he *handlerError
		if errors.As(err, &he) {
			return he.err // the handler's own error, as it returned it
		}
		if err != nil {
			return wrap(op+" of vote "+v.Key(), err)
		}
		return nil
	}
}

// handlerError carries a TxHandler's error out of the transaction unchanged.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }
func (e *handlerError) Unwrap() error { return e.err }
