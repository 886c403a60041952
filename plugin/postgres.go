package plugin

import (
	"fmt"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/topgg"
)

// FleetFence returns the fence of a PostgreSQL vote store shared by the
// processes of f's fleet, for pgstore.Config.Fence: the fencing token of the
// lease term this process holds, 0 while it does not lead. The store checks
// it in the transaction of each leader write and refuses a write whose token
// is 0 or older than one it has seen, and raises the fence at the first
// action of each term, so that a leader that lost the lease (a pause, a
// partition) changes nothing once a newer leader has begun its term:
//
//	f, err := fleet.Open(redisURL, fleet.Config{Bot: appID, ShardCount: 6})
//	store, err := pgstore.Open(ctx, pool, pgstore.Config{Fence: plugin.FleetFence(f), TxTimeout: 15 * time.Second})
//	p, err := plugin.New(client, cfg, plugin.WithFleet(f), plugin.WithVoteStore(store), ...)
//
// Set pgstore.Config.TxTimeout to about the lease's TTL (fleet.Config.LeaseTTL):
// a leader paused in a transaction holds its locks for that long at most.
// For a nil or zero Fleet it returns a fence that is always 0: every leader
// write is refused, never let through unfenced.
func FleetFence(f *fleet.Fleet) func() int64 {
	lease := f.Lease()
	if lease == nil {
		return func() int64 { return 0 }
	}
	return func() int64 { return lease.State().Token }
}

// fenceable is a vote store that fences its leader writes when told how
// (a *pgstore.Store): Fenced says whether it was.
type fenceable interface{ Fenced() bool }

// checkFencedStore refuses a fleet whose vote store can be fenced but was
// not: every process would write as leader, unchecked, and a leader that
// lost its lease could still write.
func (o *options) checkFencedStore() error {
	if o.newFleet == nil || o.voteStore == nil {
		return nil
	}
	if s, ok := o.voteStore.(fenceable); ok && !s.Fenced() {
		return fmt.Errorf("plugin: WithVoteStore: the store is shared by a fleet (WithFleet) but its leader writes are not fenced: "+
			"%w (open it with pgstore.Config{Fence: plugin.FleetFence(f)})", topgg.ErrNotConfigured)
	}
	return nil
}
