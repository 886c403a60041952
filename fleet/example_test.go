package fleet_test

import (
	"context"
	"log"
	"os"

	"github.com/dblkit/go-topgg/fleet"
)

// A process of the fleet: it reports its own shards' counts all the time, and
// when it leads, posts the fleet's total (only when every shard is counted)
// and writes shared state through the fence. (Not run: it needs a Redis.)
func ExampleLease_Run() {
	rdb, err := fleet.NewClient(os.Getenv("REDIS_URL")) // e.g. rediss://:password@redis:6380/0
	if err != nil {
		log.Fatal(err) // never shows the password
	}
	defer rdb.Close()
	const bot, shardCount = "123456789012345678", 6
	counts, err := fleet.NewCounts(rdb, bot, shardCount, fleet.CountsConfig{})
	if err != nil {
		log.Fatal(err)
	}
	reporter, err := fleet.NewReporter(counts, func() []fleet.ShardCount {
		return []fleet.ShardCount{{Shard: 0, Guilds: 1200}, {Shard: 1, Guilds: 1150}} // this process runs 0-1
	}, fleet.ReporterConfig{})
	if err != nil {
		log.Fatal(err)
	}
	lease, err := fleet.NewLease(rdb, bot, fleet.LeaseConfig{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	go func() { _ = reporter.Run(ctx) }()
	err = lease.Run(ctx, func(ctx context.Context, token int64) error {
		total, err := counts.Total(ctx)
		if err != nil {
			return nil // a Redis error: try again next interval (a real job loops until ctx is done)
		}
		if !total.Postable() {
			log.Printf("not posting: shards %v missing", total.Missing)
			return nil
		}
		log.Printf("post server_count=%d shard_count=%d", total.Servers, total.ShardCount)
		// Record what was posted, refused by Redis if a newer leader exists.
		return lease.Fence(token).Set(ctx, rdb, fleet.Key(bot, "last-post"), "…", 0)
	})
	if err != nil {
		log.Print(err)
	}
}
