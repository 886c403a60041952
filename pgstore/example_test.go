package pgstore_test

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// A bot credits vote points in its own table, in the reward's transaction:
// each vote is credited exactly once, through any crash. This example needs
// a PostgreSQL server (DATABASE_URL), so it is compiled but not run; the same
// flow runs against a real server in TestPollerRewardsInItsTransaction.
func Example() {
	ctx := context.Background()
	pool, err := pgstore.Connect(ctx, os.Getenv("DATABASE_URL")) // errors never show the password
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	store, err := pgstore.Open(ctx, pool, pgstore.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS points (user_id text PRIMARY KEY, points int NOT NULL)"); err != nil {
		fmt.Println(err)
		return
	}
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"))
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := voterewards.New(client, voterewards.Config{
		Store: store,
		// Exactly once: the points and the vote's done mark commit together.
		OnReward: store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			_, err := tx.Exec(ctx, `INSERT INTO points VALUES ($1, $2)
				ON CONFLICT (user_id) DO UPDATE SET points = points.points + EXCLUDED.points`, v.PlatformID, v.Weight)
			return err
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := p.Run(ctx); err != nil { // until ctx is done
		fmt.Println(err)
	}
}
