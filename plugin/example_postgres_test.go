package plugin_test

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// A bot that keeps its votes in its own PostgreSQL database and pays each
// vote in coins exactly once: the credit and the delivered mark commit in
// one transaction, through any crash. (Not run: it needs Top.gg and
// PostgreSQL.)
func ExampleWithState_postgres() {
	ctx := context.Background()
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	pool, err := pgstore.Connect(ctx, os.Getenv("DATABASE_URL")) // never shows the password
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close() // after Run returned
	store, err := pgstore.Open(ctx, pool, pgstore.Config{})
	if err != nil {
		log.Fatal(err)
	}
	credit := store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		_, err := tx.Exec(ctx, `INSERT INTO wallets (user_id, coins) VALUES ($1, $2)
			ON CONFLICT (user_id) DO UPDATE SET coins = wallets.coins + EXCLUDED.coins`, v.PlatformID, 100*v.Weight)
		return err
	})
	p, err := plugin.New(client, plugin.Config{}, plugin.WithState(store), plugin.WithRewardHandler(credit))
	if err != nil {
		log.Fatal(err)
	}
	// Attach the sessions, open them, then run until the bot stops.
	if err := p.Run(ctx); err != nil {
		log.Print(err)
	}
}

// One process of a fleet whose state is in PostgreSQL: every process opens
// the same store, and New fences it by the fleet's lease, so that only the
// current leader's writes commit. (Not run: it needs Top.gg, Redis and
// PostgreSQL.)
func ExampleWithFleet_postgres() {
	ctx := context.Background()
	client, err := topgg.New(os.Getenv("TOPGG_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	const lease = 15 * time.Second
	f, err := fleet.Open(os.Getenv("REDIS_URL"), fleet.Config{Bot: "123456789012345678", ShardCount: 6, LeaseTTL: lease})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close() // after Run returned
	pool, err := pgstore.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	// A paused leader holds its transactions' locks no longer than its term.
	store, err := pgstore.Open(ctx, pool, pgstore.Config{TxTimeout: lease})
	if err != nil {
		log.Fatal(err)
	}
	p, err := plugin.New(client, plugin.Config{}, plugin.WithFleet(f), plugin.WithState(store),
		plugin.WithRewardHandler(store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			_, err := tx.Exec(ctx, `UPDATE wallets SET coins = coins + $2 WHERE user_id = $1`, v.PlatformID, 100*v.Weight)
			return err
		})))
	if err != nil {
		log.Fatal(err)
	}
	// Attach this process's sessions, open them, then run until the bot stops.
	if err := p.Run(ctx); err != nil {
		log.Print(err)
	}
}
