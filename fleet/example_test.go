package fleet_test

import (
	"context"
	"log"
	"os"

	"github.com/dblkit/go-topgg/fleet"
)

// Leader-only work of your own, beside what the plugin runs: one process of
// the fleet at a time does it, and records what it did through the fence, so
// that a leader that lost the lease during a pause cannot overwrite its
// successor's record. (Not run: it needs a Redis.)
func ExampleLease_Run() {
	rdb, err := fleet.NewUniversalClient(os.Getenv("REDIS_URL")) // e.g. rediss://:password@redis:6380/0
	if err != nil {
		log.Fatal(err) // never shows the password
	}
	defer rdb.Close()
	const bot = "123456789012345678"
	f, err := fleet.New(rdb, fleet.Config{Bot: bot, ShardCount: 1})
	if err != nil {
		log.Fatal(err)
	}
	lease := f.Lease()
	ctx := context.Background()
	err = lease.Run(ctx, func(ctx context.Context, token int64) error {
		// ctx ends when the lease is lost: stop the work then.
		log.Print("leading: sending the daily digest")
		// Refused by Redis if a newer leader exists.
		return lease.Fence(token).Set(ctx, rdb, fleet.Key(bot, "last-digest"), "2026-11-25", 0)
	})
	if err != nil {
		log.Print(err)
	}
}
