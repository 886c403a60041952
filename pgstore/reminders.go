package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterperks"
)

// Reminders is the store of vote reminder opt-ins of a bot whose votes are
// in PostgreSQL (a voterperks.ReminderStore): one row per opted-in user in
// the table reminders of the store's schema, holding the key of the last
// vote they were reminded of. Any process sets a choice; recording a
// reminder is a leader write, fenced like the store's ([Config.Fence],
// [ErrFenced]). Make it with [Store.Reminders]; safe for concurrent use.
type Reminders struct {
	s                        *Store
	set, unset, get, touched string
}

// errNotMade is what a Store or Reminders not made by its constructor
// answers.
var errNotMade = fmt.Errorf("pgstore: %w (pgstore.Open, Store.Reminders)", topgg.ErrNotConfigured)

// remindersTable creates the table of [Reminders]. It is the voter
// features' own, created on their first use rather than by the store's
// migrations: a bot without them has no such table.
const remindersTable = `CREATE TABLE IF NOT EXISTS %[1]s.reminders (
	user_id text COLLATE "C" PRIMARY KEY,
	last_key text NOT NULL DEFAULT ''
)`

// OpenReminders is [Store.Reminders] as a voterperks.ReminderStore: what
// plugin.WithVoterPerks asks of a vote store that keeps the reminder opt-ins
// beside the votes. Going through an interface, rather than the store's
// type, lets a bot that does not use PostgreSQL leave pgx out of its binary.
func (s *Store) OpenReminders(ctx context.Context) (voterperks.ReminderStore, error) {
	r, err := s.Reminders(ctx)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Reminders returns the reminder opt-ins kept beside the votes, creating
// their table if it is missing (under the schema's advisory lock, so that
// processes starting at once create it once).
func (s *Store) Reminders(ctx context.Context) (*Reminders, error) {
	if s == nil || s.pool == nil {
		return nil, errNotMade
	}
	q := pgx.Identifier{s.schema}.Sanitize()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "go-topgg/pgstore migrate:"+s.schema); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, fmt.Sprintf(remindersTable, q))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: reminders table: %w", err)
	}
	f := func(sql string) string { return fmt.Sprintf(sql, q) }
	return &Reminders{
		s:       s,
		set:     f(`INSERT INTO %[1]s.reminders (user_id) VALUES ($1) ON CONFLICT DO NOTHING`),
		unset:   f(`DELETE FROM %[1]s.reminders WHERE user_id = $1`),
		get:     f(`SELECT last_key FROM %[1]s.reminders WHERE user_id = $1`),
		touched: f(`UPDATE %[1]s.reminders SET last_key = $2 WHERE user_id = $1`),
	}, nil
}

// SetReminder records userID's choice; turning reminders on again keeps the
// last reminded vote. Not fenced: the interaction may reach any process.
func (r *Reminders) SetReminder(ctx context.Context, userID string, on bool) error {
	if r == nil || r.s == nil {
		return errNotMade
	}
	sql := r.unset
	if on {
		sql = r.set
	}
	if _, err := r.s.pool.Exec(ctx, sql, userID); err != nil {
		return r.s.wrap("set reminder", err)
	}
	return nil
}

// Reminder reads userID's choice and last reminded vote.
func (r *Reminders) Reminder(ctx context.Context, userID string) (on bool, last string, err error) {
	if r == nil || r.s == nil {
		return false, "", errNotMade
	}
	err = r.s.pool.QueryRow(ctx, r.get, userID).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, "", nil
	}
	if err != nil {
		return false, "", r.s.wrap("read reminder", err)
	}
	return true, last, nil
}

// Reminded records that userID was reminded of vote key, if they still want
// reminders; a leader write, fenced by [Config.Fence] in the same
// transaction ([ErrFenced]).
func (r *Reminders) Reminded(ctx context.Context, userID, key string) error {
	if r == nil || r.s == nil {
		return errNotMade
	}
	return r.s.leaderExec(ctx, "record reminder", r.touched, userID, key)
}
