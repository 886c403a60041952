package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/fleet"
)

// Bounds: of SHARD_COUNT, as Discord's largest bots run a few thousand shards,
// each a gateway connection of this one process; of TOPGG_FLEET_LEASE, as
// below a second a GC pause costs the leadership, and above ten minutes a
// dead leader leaves the listing unposted.
const (
	maxShards     = 4096
	minFleetLease = time.Second
	maxFleetLease = 10 * time.Minute
)

// validateFleet checks SHARD_COUNT, REDIS_URL, SHARD_IDS and TOPGG_FLEET_LEASE.
func (c config) validateFleet() error {
	if c.ShardCount < 1 || c.ShardCount > maxShards {
		return badVariable("SHARD_COUNT", fmt.Sprintf("%d is not between 1 and %d (each shard is a gateway connection of this one process)",
			c.ShardCount, maxShards))
	}
	if n := len(c.ShardIDs); n > 0 && c.ShardIDs[n-1] >= c.ShardCount {
		return badVariable("SHARD_IDS", fmt.Sprintf("shard %d is not below SHARD_COUNT (%d)", c.ShardIDs[n-1], c.ShardCount))
	}
	if !c.fleetMode() {
		if len(c.ShardIDs) > 0 && len(c.ShardIDs) < c.ShardCount {
			return badVariable("SHARD_IDS", fmt.Sprintf("runs %d of %d shards, which needs REDIS_URL (fleet mode): "+
				"alone, this process would never see every shard and so never post", len(c.ShardIDs), c.ShardCount))
		}
		return nil
	}
	rdb, err := fleet.NewUniversalClient(c.RedisURL.Reveal()) // connects to nothing yet; a Cluster or Sentinel URL too
	if err != nil {
		return badVariable("REDIS_URL", strings.TrimPrefix(err.Error(), "fleet: ")) // never shows the password
	}
	_ = rdb.Close()
	if c.FleetLease < minFleetLease || c.FleetLease > maxFleetLease {
		return badVariable("TOPGG_FLEET_LEASE", fmt.Sprintf("%v is not between %v and %v", c.FleetLease, minFleetLease, maxFleetLease))
	}
	return nil
}

func (c config) fleetMode() bool { return c.RedisURL.Reveal() != "" }
