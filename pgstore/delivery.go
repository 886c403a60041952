package pgstore

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/voterewards"
)

// Load implements [voterewards.Store]: one snapshot of the checkpoint and the
// votes seen or pending.
func (s *Store) Load(ctx context.Context) (*voterewards.Snapshot, error) {
	if err := s.claimForRead(ctx); err != nil {
		return nil, err
	}
	snap := &voterewards.Snapshot{}
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var last, since *int64
		err := tx.QueryRow(ctx, s.q.loadCheckpoint).Scan(&snap.Checkpoint.Cursor, &last, &since)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		snap.Checkpoint.LastSeen, snap.Checkpoint.Since = fromNS(last), fromNS(since)
		rows, _ := tx.Query(ctx, s.q.load)
		defer rows.Close()
		for rows.Next() {
			var seen, pending, expiry bool
			v, err := scanVote(rows, &seen, &pending, &expiry)
			if err != nil {
				return err
			}
			if seen {
				snap.Seen = append(snap.Seen, v)
			}
			if pending {
				snap.Pending = append(snap.Pending, v)
			}
			if expiry {
				snap.Expiries = append(snap.Expiries, v)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.wrap("load", err)
	}
	return snap, nil
}

// Delivered implements [voterewards.Store]; a fenced leader write. It is
// idempotent, and never makes an expiry handled by [Store.Expiry] pending again.
func (s *Store) Delivered(ctx context.Context, v voterewards.Vote, expire bool) error {
	return s.leaderExec(ctx, "delivered", s.q.delivered, voterOf(v), v.CreatedAt.UnixNano(), expire)
}

// Expired implements [voterewards.Store]; a leader write (fenced).
func (s *Store) Expired(ctx context.Context, v voterewards.Vote) error {
	return s.leaderExec(ctx, "expired", s.q.expired, voterOf(v), v.CreatedAt.UnixNano())
}

// Prune implements [voterewards.Store]; fenced. The votes leave the dedup set;
// those that left it before [Config.Retention] are deleted. The ledger stays.
func (s *Store) Prune(ctx context.Context, createdBefore, now time.Time) error {
	retired := int64(math.MinInt64)
	if s.retention > 0 {
		retired = now.Add(-s.retention).UnixNano()
	}
	return s.leaderExec(ctx, "prune", s.q.prune, createdBefore.UnixNano(), now.UnixNano(), retired)
}

// leaderExec runs one statement and, with a fence, the fence's check in the
// same implicit transaction: one round trip.
func (s *Store) leaderExec(ctx context.Context, op, sql string, args ...any) error {
	tok, fenced, err := s.leaderToken(ctx)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(s.q.txLimits, s.txLimit(ctx))
	b.Queue(sql, args...)
	if fenced {
		b.Queue(s.q.checkFence, tok)
	}
	if err = s.pool.SendBatch(ctx, b).Close(); err != nil {
		return s.wrap(op, err)
	}
	return nil
}
