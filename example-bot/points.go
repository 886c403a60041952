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

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/plugin/deploy"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// pointsStore is the bot's economy: points per user, a vote's weight each,
// credited by reward and read by read. With DATABASE_URL, in the bot's table
// in the reward's transaction (exactly once); else in TOPGG_STATE_DIR (at
// least once); a fleet without DATABASE_URL keeps none (no shared file).
type pointsStore struct {
	reward voterewards.Handler
	read   func(ctx context.Context, user string) (int64, error)
	close  func() error // nil: nothing of its own to close
}

// openPostgres makes the points table in the deployment's database.
func openPostgres(ctx context.Context, d *deploy.Deployment) (*pointsStore, error) {
	// Under a lock (in one implicit transaction): a fleet's processes starting together race on CREATE TABLE.
	_, err := d.Pool.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('example_bot_points')); "+
		"CREATE TABLE IF NOT EXISTS example_bot_points (user_id text PRIMARY KEY, points bigint NOT NULL)")
	if err != nil {
		return nil, fmt.Errorf("the points table (DATABASE_URL): %w", err)
	}
	credit := func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		_, err := tx.Exec(ctx, "INSERT INTO example_bot_points VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET "+
			"points = example_bot_points.points + excluded.points", v.PlatformID, max(v.Weight, 1))
		return err
	}
	return &pointsStore{
		reward: d.Postgres.Reward(credit), // exactly once: the credit and the vote's done mark commit together
		read: func(ctx context.Context, user string) (n int64, err error) { // 0 for a user without points
			return n, d.Pool.QueryRow(ctx, "SELECT coalesce((SELECT points FROM example_bot_points WHERE user_id = $1), 0)", user).Scan(&n)
		},
	}, nil
}

// openPointsFile keeps the points in a bbolt file of the state directory.
func openPointsFile(dir string) (*pointsStore, error) {
	db, err := bbolt.Open(filepath.Join(dir, "points.db"), 0o600, &bbolt.Options{Timeout: time.Second})
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

// perks opens the points and adds to opts, when votes are polled, the voter
// features (/vote with the reminders opt-in and the user's points,
// /leaderboard, reminders, the voter role) and the points' reward handler.
func (b *bot) perks(ctx context.Context, appID string, opts []plugin.Option) (_ []plugin.Option, err error) {
	if !b.cfg.Config.PollsVotes() {
		return opts, nil
	}
	switch {
	case b.dep.Postgres != nil:
		b.points, err = openPostgres(ctx, b.dep)
	case b.dep.Fleet == nil:
		b.points, err = openPointsFile(b.cfg.StateDir)
	}
	if err != nil {
		return nil, err
	}
	v := plugin.VoterPerks{BotID: appID, Reminders: true}
	if b.cfg.RewardGuildID != "" {
		v.Role = &voterperks.Role{GuildID: string(b.cfg.RewardGuildID), RoleID: string(b.cfg.RewardRoleID)}
	}
	if b.points == nil {
		return append(opts, plugin.WithVoterPerks(v)), nil
	}
	v.Texts.VoteExtra = b.voteExtra
	return append(opts, plugin.WithVoterPerks(v), plugin.WithRewardHandler(b.points.reward)), nil
}

// voteExtra adds the user's weighted total and points to /vote's answer.
func (b *bot) voteExtra(ctx context.Context, v voterperks.VoteInfo) string {
	points, err := b.points.read(ctx, v.UserID)
	if err != nil {
		b.log.Warn("/vote: could not read the user's points", "user", v.UserID, "error", err)
		return ""
	}
	if v.StatsErr != nil {
		return fmt.Sprintf("Points: %d", points)
	}
	return fmt.Sprintf("Total (weekend votes count twice): %d · points: %d", v.Stats.Total, points)
}
