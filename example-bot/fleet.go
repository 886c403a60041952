package main

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/fleet"
)

// shardIDs is SHARD_IDS: the shards this process runs, in increasing order,
// written as ids and ranges ("0-3", "0,2,4", "0-1,4-5"). Nil: every shard.
type shardIDs []int

// Bounds: Discord's largest bots run a few thousand shards, so more is a typo
// that would exhaust the memory of this process (0-1000000000 must not
// allocate gigabytes before SHARD_COUNT is known).
const maxShards = 4096

// EnvDecode parses the list. Ids and ranges may not overlap.
func (s *shardIDs) EnvDecode(v string) error {
	var ids []int
	for part := range strings.SplitSeq(v, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		if !isRange {
			hi = lo
		}
		first, err1 := parseShardID(lo)
		last, err2 := parseShardID(hi)
		if err := cmp.Or(err1, err2); err != nil {
			return err
		}
		if last < first {
			return fmt.Errorf("range %d-%d ends before it starts", first, last)
		}
		for id := first; id <= last; id++ {
			if slices.Contains(ids, id) {
				return fmt.Errorf("shard %d is listed twice (overlapping ranges)", id)
			}
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	*s = ids
	return nil
}

// parseShardID reads one id: decimal digits, no sign, no leading zero.
func parseShardID(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.Trim(s, "0123456789") != "" || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%q is not a shard id (want ids and ranges such as 0-3 or 0,2,4)", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n >= maxShards {
		return 0, fmt.Errorf("shard id %s is above %d", s, maxShards-1)
	}
	return n, nil
}

// Bounds of TOPGG_FLEET_LEASE: below a second, a GC pause costs the
// leadership; above ten minutes, a dead leader leaves the listing unposted.
const (
	minFleetLease = time.Second
	maxFleetLease = 10 * time.Minute
)

// validateFleet checks SHARD_COUNT, REDIS_URL, SHARD_IDS and TOPGG_FLEET_LEASE.
func (c config) validateFleet() error {
	if c.ShardCount < 1 || c.ShardCount > maxShards {
		return badVariable("SHARD_COUNT", fmt.Sprintf("%d is not between 1 and %d (each shard is a gateway connection of this one process)",
			c.ShardCount, maxShards))
	}
	for _, id := range c.ShardIDs {
		if id >= c.ShardCount {
			return badVariable("SHARD_IDS", fmt.Sprintf("shard %d is not below SHARD_COUNT (%d)", id, c.ShardCount))
		}
	}
	if !c.fleetMode() {
		if len(c.ShardIDs) > 0 && len(c.ShardIDs) < c.ShardCount {
			return badVariable("SHARD_IDS", fmt.Sprintf("runs %d of %d shards, which needs REDIS_URL (fleet mode): "+
				"alone, this process would never see every shard and so never post", len(c.ShardIDs), c.ShardCount))
		}
		return nil
	}
	rdb, err := fleet.NewClient(c.RedisURL.Reveal()) // connects to nothing yet
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

// openFleet connects lazily to the fleet of the application appID, or returns
// nil outside fleet mode. It is closed after the plugin's Run returned.
func openFleet(c config, appID string, log *slog.Logger) (*fleet.Fleet, error) {
	if !c.fleetMode() {
		return nil, nil
	}
	return fleet.Open(c.RedisURL.Reveal(), fleet.Config{Bot: appID, ShardCount: c.ShardCount, LeaseTTL: c.FleetLease, Logger: log})
}
