//go:build unix

package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// The bot of the crash and fleet tests keeps its own economy in PostgreSQL:
// app.points, one row per voter, credited with each vote's weight; and
// app.credits, one row per credit, so that a vote credited twice shows.

// execer is what creditPoints writes through: a pgx.Tx, or a pool for a write in
// its own transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// createApp creates the bot's tables in schema app.
func createApp(t *testing.T, pool *pgxpool.Pool, app string) {
	t.Helper()
	id := pgx.Identifier{app}.Sanitize()
	_, err := pool.Exec(context.Background(), `CREATE SCHEMA `+id+`;
		CREATE TABLE `+id+`.points (user_id text PRIMARY KEY, points bigint NOT NULL);
		CREATE TABLE `+id+`.credits (id bigserial PRIMARY KEY, vote_key text NOT NULL, user_id text NOT NULL,
			weight int NOT NULL, tag text NOT NULL)`)
	require.NoError(t, err)
}

// creditPoints credits v's weight to its voter, and records the credit with tag
// (the process that made it).
func creditPoints(ctx context.Context, db execer, app, tag string, v voterewards.Vote) error {
	id := pgx.Identifier{app}.Sanitize()
	if _, err := db.Exec(ctx, `INSERT INTO `+id+`.credits (vote_key, user_id, weight, tag) VALUES ($1, $2, $3, $4)`,
		v.Key(), v.PlatformID, v.Weight, tag); err != nil {
		return fmt.Errorf("record credit: %w", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO `+id+`.points (user_id, points) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET points = points.points + EXCLUDED.points`, v.PlatformID, v.Weight); err != nil {
		return fmt.Errorf("credit points: %w", err)
	}
	return nil
}

// tally is what the bot's tables hold at the end of a run.
type tally struct {
	points  map[string]int64 // per voter
	credits map[string]int   // per vote key: how many times it was credited
	rows    int              // credits in all
}

func readTally(t *testing.T, pool *pgxpool.Pool, app string) tally {
	t.Helper()
	ctx := context.Background()
	id := pgx.Identifier{app}.Sanitize()
	out := tally{points: map[string]int64{}, credits: map[string]int{}}
	rows, err := pool.Query(ctx, `SELECT user_id, points FROM `+id+`.points`)
	require.NoError(t, err)
	var user string
	var pts int64
	_, err = pgx.ForEachRow(rows, []any{&user, &pts}, func() error { out.points[user] = pts; return nil })
	require.NoError(t, err)
	rows, err = pool.Query(ctx, `SELECT vote_key, count(*) FROM `+id+`.credits GROUP BY vote_key`)
	require.NoError(t, err)
	var key string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&key, &n}, func() error { out.credits[key] = n; out.rows += n; return nil })
	require.NoError(t, err)
	return out
}

// distinctCredited returns how many votes were credited at least once.
func distinctCredited(ctx context.Context, pool *pgxpool.Pool, app string) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(DISTINCT vote_key) FROM `+pgx.Identifier{app}.Sanitize()+`.credits`).Scan(&n)
	return n, err
}

// voteSet is the votes a test adds to the fake service, in creation order:
// users voters, each voting every 13 hours (so that no two of a voter's
// votes are one vote), weights 1 or 2 at random.
type voteSet struct {
	votes []topggtest.Vote
	want  map[string]int64 // per voter (PlatformID): the sum of the weights
	keys  []string         // every vote's Key
}

func newVoteSet(n, users int, rng *rand.Rand) voteSet {
	perUser := (n + users - 1) / users
	base := time.Now().Add(-time.Duration(perUser)*13*time.Hour - time.Hour).UTC().Truncate(time.Second)
	s := voteSet{want: map[string]int64{}}
	for i := range n {
		u, round := i%users, i/users
		v := topggtest.Vote{
			UserID: fmt.Sprintf("7%017d", u), PlatformID: fmt.Sprintf("3%017d", u), Weight: 1 + rng.IntN(2),
			CreatedAt: base.Add(time.Duration(round)*13*time.Hour + time.Duration(i)*time.Second),
		}
		s.votes = append(s.votes, v)
		s.want[v.PlatformID] += int64(v.Weight)
		s.keys = append(s.keys, voterewards.Vote{Vote: v}.Key())
	}
	return s
}
