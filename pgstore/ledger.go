package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// Stats implements [voterewards.Store]: one indexed read of the voter's row.
func (s *Store) Stats(ctx context.Context, user string) (voterewards.Stats, error) {
	if user == "" {
		return voterewards.Stats{}, fmt.Errorf("pgstore: Stats: %w (no user id)", topgg.ErrNilArgument)
	}
	st, _, err := scanLedger(s.pool.QueryRow(ctx, s.q.stats, user), false)
	if errors.Is(err, pgx.ErrNoRows) {
		return voterewards.Stats{UserID: user}, nil
	}
	if err != nil {
		return voterewards.Stats{}, s.wrap("stats", err)
	}
	return st, nil
}

// Leaderboard implements [voterewards.Store]: n rows of one scan of the board's index
// (a month's: of voter_past_months' and of the ledger's, merged).
func (s *Store) Leaderboard(ctx context.Context, month time.Time, n int) ([]voterewards.Standing, error) {
	if n < 1 || n > voterewards.MaxLeaderboard {
		return nil, voterewards.ErrBadLeaderboard
	}
	var rows pgx.Rows
	if month.IsZero() {
		rows, _ = s.pool.Query(ctx, s.q.board, n)
	} else {
		rows, _ = s.pool.Query(ctx, s.q.monthBoard, voterewards.MonthOf(month).UnixNano(), n)
	}
	board, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (voterewards.Standing, error) {
		var st voterewards.Standing
		var total, reached int64
		err := r.Scan(&st.UserID, &st.Votes, &total, &reached)
		st.Total, st.ReachedAt = int(total), fromNS(&reached)
		return st, err
	})
	if err != nil {
		return nil, s.wrap("leaderboard", err)
	}
	return board, nil
}
