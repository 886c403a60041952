package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// LoadHash implements [voterewards.State]: "" when none was saved.
func (s *Store) LoadHash(ctx context.Context) (string, error) {
	var hash string
	err := s.pool.QueryRow(ctx, s.q.loadHash).Scan(&hash)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", s.wrap("load command hash", err)
	}
	return hash, nil
}

// SaveHash implements [voterewards.State]; a leader write (fenced).
func (s *Store) SaveHash(ctx context.Context, hash string) error {
	return s.leaderExec(ctx, "save command hash", s.q.saveHash, hash)
}
