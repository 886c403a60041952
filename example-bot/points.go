package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"go.etcd.io/bbolt"
	bberrors "go.etcd.io/bbolt/errors"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/plugin/deploy"
	"github.com/dblkit/go-topgg/voterewards"
)

// The bot's own economy: vote points per user, a vote's weight each. With
// DATABASE_URL they live in the bot's table beside the state, credited in
// the reward's transaction (exactly once); else in a file of
// TOPGG_STATE_DIR, credited by a handler (at least once). A fleet without
// DATABASE_URL keeps none: no file is shared.
const (
	pointsTable = "example_bot_points"
	pointsFile  = "points.db"
)

// pointsStore keeps the points: reward credits a vote, read returns a user's.
type pointsStore struct {
	reward voterewards.Handler
	read   func(ctx context.Context, user string) (int64, error)
	close  func() error
}

// openPostgres makes the points table in the deployment's database.
func openPostgres(ctx context.Context, d *deploy.Deployment) (*pointsStore, error) {
	// Under a lock: processes of a fleet that start together would race
	// on CREATE TABLE IF NOT EXISTS. (No arguments: one implicit transaction.)
	_, err := d.Pool.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('"+pointsTable+"')); "+
		"CREATE TABLE IF NOT EXISTS "+pointsTable+" (user_id text PRIMARY KEY, points bigint NOT NULL)")
	if err != nil {
		return nil, fmt.Errorf("the points table (DATABASE_URL): %w", err)
	}
	credit := func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		_, err := tx.Exec(ctx, "INSERT INTO "+pointsTable+" VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET points = "+
			pointsTable+".points + excluded.points", v.PlatformID, max(v.Weight, 1))
		return err
	}
	return &pointsStore{
		reward: d.Postgres.Reward(credit), // exactly once: the credit and the vote's done mark commit together
		read: func(ctx context.Context, user string) (n int64, err error) { // 0 for a user without points
			return n, d.Pool.QueryRow(ctx, "SELECT coalesce((SELECT points FROM "+pointsTable+" WHERE user_id = $1), 0)", user).Scan(&n)
		},
		close: func() error { return nil }, // the pool is the deployment's
	}, nil
}

// openPointsFile keeps the points in a bbolt file of the state directory.
func openPointsFile(dir string) (*pointsStore, error) {
	db, err := bbolt.Open(filepath.Join(dir, pointsFile), 0o600, &bbolt.Options{Timeout: time.Second})
	if errors.Is(err, bberrors.ErrTimeout) {
		err = errors.New("the state directory is in use by another process")
	}
	if err != nil {
		return nil, fmt.Errorf("vote points (TOPGG_STATE_DIR): %w", err)
	}
	bucket := []byte("points")
	get := func(tx *bbolt.Tx, user string) int64 {
		n, _ := strconv.ParseInt(string(tx.Bucket(bucket).Get([]byte(user))), 10, 64)
		return n
	}
	if err := db.Update(func(tx *bbolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucket); return err }); err != nil {
		return nil, errors.Join(fmt.Errorf("vote points: %w", err), db.Close())
	}
	return &pointsStore{
		reward: func(_ context.Context, v voterewards.Vote) error {
			return db.Update(func(tx *bbolt.Tx) error {
				return tx.Bucket(bucket).Put([]byte(v.PlatformID), strconv.AppendInt(nil, get(tx, v.PlatformID)+int64(max(v.Weight, 1)), 10))
			})
		},
		read: func(_ context.Context, user string) (n int64, err error) {
			return n, db.View(func(tx *bbolt.Tx) error { n = get(tx, user); return nil })
		},
		close: db.Close,
	}, nil
}

// openPoints opens where the points live, if anywhere, and returns the
// plugin's option for the handler that credits them.
func (b *bot) openPoints(ctx context.Context) ([]plugin.Option, error) {
	var err error
	switch {
	case b.dep.Postgres != nil:
		b.points, err = openPostgres(ctx, b.dep)
	case b.dep.Fleet != nil:
		return nil, nil // a fleet without a database keeps no points
	default:
		b.points, err = openPointsFile(b.cfg.StateDir)
	}
	if err != nil {
		return nil, err
	}
	return []plugin.Option{plugin.WithRewardHandler(b.points.reward)}, nil
}
