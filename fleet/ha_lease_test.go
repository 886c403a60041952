package fleet

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
)

// TestUnacknowledgedRenewalsEndTheTerm: a renewal the replica does not
// acknowledge does not move the leader's deadline (a failover could lose
// it), so a leader whose replica stops answering ends its term within
// TTL-TTL/5, and nobody leads until the replica answers again.
func TestUnacknowledgedRenewalsEndTheTerm(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, redistest.WithArgs("--repl-diskless-sync-delay", "0"))
	replica := redistest.Start(t, redistest.WithArgs("--replicaof", "127.0.0.1", portOf(t, master)))
	ctx := context.Background()
	mc := master.Client(t)
	require.Eventually(t, func() bool {
		info, err := mc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "state=online")
	}, haWait, haTick, "the replica never synced")

	c := startContender(t, master.Addr(), "renew-ack", shortLease, blockUntilDone)
	require.Eventually(t, func() bool { return c.lease.State().Leader }, haWait, haTick)
	first := c.lease.State().Token

	replica.Pause()
	start := time.Now()
	require.Eventually(t, func() bool { return !c.lease.State().Leader }, shortLease.TTL, time.Millisecond,
		"the leader kept its term on renewals the replica never acknowledged")
	assert.Less(t, time.Since(start), shortLease.TTL, "the term outlived the lease it had in Redis")
	assert.Never(t, func() bool { return c.lease.State().Leader }, shortLease.TTL/2, haTick,
		"an unacknowledged election led")
	assert.Contains(t, c.log.String(), "not acknowledged by every replica")

	replica.Resume()
	require.Eventually(t, func() bool { return c.lease.State().Leader }, haWait, haTick, "no term once the replica answered")
	assert.Greater(t, c.lease.State().Token, first)
}

// TestLeaseOnARingElectsWithoutWaiting: a client that cannot be pinned to one
// master (a Ring) still elects, only without waiting for replicas.
func TestLeaseOnARingElectsWithoutWaiting(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": srv.Addr()}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = ring.Close() })
	f, err := New(ring, Config{Bot: "ring", ShardCount: 1, LeaseTTL: shortLease.TTL})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Lease().Run(ctx, blockUntilDone) }()
	require.Eventually(t, func() bool { return f.Lease().State().Leader }, haWait, haTick)
	cancel()
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)
}

// portOf returns srv's port.
func portOf(t testing.TB, srv *redistest.Server) string {
	t.Helper()
	_, port, err := net.SplitHostPort(srv.Addr())
	require.NoError(t, err)
	return port
}
