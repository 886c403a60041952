package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// errNotAcknowledged: an election or a renewal that the master's replicas
// did not all acknowledge in time. A failover could lose it, so it does not
// count: an election is given back (the lease released, the token never
// used), a renewal does not move the leader's deadline.
var errNotAcknowledged = errors.New("fleet: not acknowledged by every replica in time")

// maxAckWait caps how long an election or a renewal waits for the replicas.
const maxAckWait = time.Second

// ackWait is how long an election or a renewal waits for the replicas'
// acknowledgement: TTL/10, at most maxAckWait, at least 1 ms (WAIT with 0
// would wait forever). It is well inside the request's own budget (TTL/3).
func (l *Lease) ackWait() time.Duration {
	return max(min(l.ttl/10, maxAckWait), time.Millisecond)
}

// runAcked runs script on one connection to the master that serves the
// bot's keys and, when wrote says the reply means it wrote, waits (WAIT) until
// every replica connected to that master has acknowledged the write; else it
// returns the reply with an error wrapping [errNotAcknowledged]. WAIT counts
// the writes of its own connection, hence one pinned connection.
//
// This is what keeps fencing tokens from repeating or going backwards across
// a failover: Sentinel and Cluster promote a replica, and every replica that
// was connected when a token was drawn holds it. A client that cannot be
// pinned to the master (one that is neither a *redis.Client, Sentinel's
// included, nor a *redis.ClusterClient) runs the script without waiting.
func (l *Lease) runAcked(ctx context.Context, script *redis.Script, keys []string, args []any, wrote func(any) bool) (any, error) {
	node, err := l.master(ctx)
	if err != nil {
		l.reload(ctx)
		return nil, err
	}
	if node == nil {
		return script.Run(ctx, l.rdb, keys, args...).Result()
	}
	conn := node.Conn()
	defer conn.Close()
	v, err := script.Run(ctx, conn, keys, args...).Result()
	if err != nil {
		l.reload(ctx)
		return nil, err
	}
	if !wrote(v) {
		return v, nil
	}
	if err := l.awaitReplicas(ctx, conn); err != nil {
		l.reload(ctx)
		return v, err
	}
	return v, nil
}

// master returns a client of the master of the bot's slot (nil when rdb
// cannot be pinned to it).
func (l *Lease) master(ctx context.Context) (*redis.Client, error) {
	switch c := l.rdb.(type) {
	case *redis.Client:
		return c, nil
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, l.leaseKey)
	}
	return nil, nil
}

// reload makes a cluster client reload its slot map after an error: go-redis
// learns that a replica was promoted only from a reload or a MOVED reply, and
// a dead master sends none. The counts, and a Redis state on the same client
// (as plugin/deploy makes it), find the new master too.
func (l *Lease) reload(ctx context.Context) {
	if c, ok := l.rdb.(*redis.ClusterClient); ok {
		c.ReloadState(ctx)
	}
}

// awaitReplicas waits until every replica connected to conn's master has
// acknowledged conn's writes, within ackWait.
func (l *Lease) awaitReplicas(ctx context.Context, conn *redis.Conn) error {
	role, err := conn.Do(ctx, "ROLE").Slice()
	if err != nil {
		return err
	}
	if len(role) < 3 || role[0] != "master" {
		return fmt.Errorf("fleet: the lease's node is no master (ROLE %v)", role[0])
	}
	replicas, _ := role[2].([]any)
	if len(replicas) == 0 {
		return nil // nothing to lose it to: a failover has no replica to promote
	}
	wait := l.ackWait()
	n, err := conn.Wait(ctx, len(replicas), wait).Result()
	if err != nil {
		return err
	}
	if int(n) < len(replicas) {
		return fmt.Errorf("%w: %d of %d replicas within %v", errNotAcknowledged, n, len(replicas), wait)
	}
	return nil
}
