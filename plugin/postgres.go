package plugin

import (
	"github.com/dblkit/go-topgg/fleet"
)

// FleetFence returns the fence of a PostgreSQL vote store shared by the
// processes of f's fleet, for pgstore.Config.Fence: the fencing token of the
// lease term this process holds, 0 while it does not lead. The store checks
// it in the transaction of each leader write and refuses a write whose token
// is 0 or older than one it has seen, so that a leader that lost the lease (a
// pause, a partition) changes nothing once a newer leader has written:
//
//	f, err := fleet.Open(redisURL, fleet.Config{Bot: appID, ShardCount: 6})
//	store, err := pgstore.Open(ctx, pool, pgstore.Config{Fence: plugin.FleetFence(f)})
//	p, err := plugin.New(client, cfg, plugin.WithFleet(f), plugin.WithVoteStore(store), ...)
//
// For a nil or zero Fleet it returns a fence that is always 0: every leader
// write is refused, never let through unfenced.
func FleetFence(f *fleet.Fleet) func() int64 {
	lease := f.Lease()
	if lease == nil {
		return func() int64 { return 0 }
	}
	return func() int64 { return lease.State().Token }
}
