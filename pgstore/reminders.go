package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// SetReminder implements [voterewards.ReminderStore]; not fenced (any process may ask).
func (s *Store) SetReminder(ctx context.Context, userID string, on bool) error {
	sql := s.q.unsetReminder
	if on {
		sql = s.q.setReminder
	}
	if _, err := s.pool.Exec(ctx, sql, userID); err != nil {
		return s.wrap("set reminder", err)
	}
	return nil
}

// Reminder implements [voterewards.ReminderStore].
func (s *Store) Reminder(ctx context.Context, userID string) (on bool, last string, err error) {
	err = s.pool.QueryRow(ctx, s.q.reminder, userID).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, "", nil
	}
	if err != nil {
		return false, "", s.wrap("read reminder", err)
	}
	return true, last, nil
}

// Reminded implements [voterewards.ReminderStore]; a fenced leader write ([ErrFenced]).
func (s *Store) Reminded(ctx context.Context, userID, key string) error {
	return s.leaderExec(ctx, "record reminder", s.q.reminded, userID, key)
}
