package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// errNotAcknowledged: an election or renewal not acknowledged by every replica
// in time, which a failover could lose; it does not count.
var errNotAcknowledged = errors.New("fleet: not acknowledged by every replica in time")

// maxAckWait caps how long an election or a renewal waits for the replicas.
const maxAckWait = time.Second

// ackWait is how long an election or a renewal waits for the replicas; at
// least 1 ms, as WAIT 0 waits forever.
func (l *Lease) ackWait() time.Duration {
	return max(min(l.ttl/10, maxAckWait), time.Millisecond)
}

// runAcked runs script on the master of the bot's keys and, when wrote says it
// wrote, waits until every connected replica acknowledged it, else returns an
// error wrapping [errNotAcknowledged]: so fencing tokens survive a failover.
// A client that cannot be pinned to the master runs it without waiting.
func (l *Lease) runAcked(ctx context.Context, script *redis.Script, keys []string, args []any, wrote func(any) bool) (any, error) {
	// WAIT counts its own connection's writes, hence one pinned connection.
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

// reload makes a cluster client reload its slot map after an error, as a dead
// master sends no MOVED reply; others on the same client benefit too.
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
