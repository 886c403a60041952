package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testlog"
)

// failoverTimeout bounds the waits for a cluster or Sentinel failover and for
// a cluster to form.
const failoverTimeout = 30 * time.Second

// Cluster is a Redis Cluster owned by a test: three masters with one replica
// each (six redis-server processes, each a [Server] with AOF, so that a
// killed node can be restarted and rejoin), node timeout 1 s. The test's
// Cleanup stops every node.
type Cluster struct {
	t     testing.TB
	nodes []*Server
}

// StartCluster starts six cluster-enabled redis-servers on free 127.0.0.1
// ports, joins them with `redis-cli --cluster create --cluster-replicas 1`,
// and waits (bounded) until every node says cluster_state:ok and knows all
// six.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	Require(t)
	cli := testlog.LookPath(t, "redis-cli", "redis-tools")
	c := &Cluster{t: t}
	for range 6 {
		c.nodes = append(c.nodes, Start(t, WithArgs("--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "1000", // a dead master is replaced within about twice this (ms)
			// A replica may be promoted however long it was cut off: the
			// tests kill masters on purpose, and must not stall on a
			// replica Redis finds too stale.
			"--cluster-replica-validity-factor", "0", fastSync()[0], fastSync()[1])))
	}
	args := append(append([]string{"--cluster", "create"}, c.Addrs()...), "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), failoverTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := poll(ctx, func() error { return healthy(ctx, c.nodes) }); err != nil {
		t.Fatalf("redistest: cluster did not form: %v", err)
	}
	return c
}

// Addrs returns host:port of every node, masters and replicas.
func (c *Cluster) Addrs() []string { return addrs(c.nodes) }

// addrs returns host:port of each of nodes.
func addrs(nodes []*Server) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Addr()
	}
	return out
}

// Client returns a new cluster client of the nodes, closed in t.Cleanup. It
// reloads the slot map every 200 ms of use: go-redis learns a promotion
// only from a reload or a MOVED reply, and a dead master sends none.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true,
		DialTimeout: 200 * time.Millisecond, ClusterStateReloadInterval: 200 * time.Millisecond,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}}) // as fleet.NewUniversalClient: see redistest.go's Client
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// MasterOf returns the live node that serves key's hash slot as master, as
// the live nodes see it (every live node that knows the slot agrees).
func (c *Cluster) MasterOf(ctx context.Context, key string) (*Server, error) {
	var found *Server
	for _, n := range c.nodes {
		var addr string
		err := withNode(ctx, n, func(nc *redis.Client) error {
			slot, err := nc.ClusterKeySlot(ctx, key).Result()
			shards, err2 := nc.ClusterShards(ctx).Result()
			for _, sh := range shards {
				if slices.ContainsFunc(sh.Slots, func(r redis.SlotRange) bool { return r.Start <= slot && slot <= r.End }) {
					addr = onlineMaster(sh)
				}
			}
			return errors.Join(err, err2)
		})
		if err != nil || addr == "" {
			continue // a dead node, or one that lost the slot's master for now
		}
		m := byAddr(c.nodes, addr)
		if m == nil || (found != nil && found != m) {
			return nil, fmt.Errorf("the nodes disagree on the master of %q", key)
		}
		found = m
	}
	if found == nil {
		return nil, fmt.Errorf("no live node names a master of %q", key)
	}
	return found, nil
}

// KillMasterOf SIGKILLs the master of key's slot and waits (bounded) until
// its replica has been promoted: the replica says it is master of the slot
// and every live node says cluster_state:ok. It returns the killed node
// (restart it with [Server.Restart]: it rejoins as a replica) and the
// promoted one.
func (c *Cluster) KillMasterOf(ctx context.Context, key string) (killed, promoted *Server) {
	c.t.Helper()
	killed, err := c.MasterOf(ctx, key)
	if err != nil {
		c.t.Fatalf("redistest: %v", err)
	}
	killed.Kill()
	live := slices.DeleteFunc(slices.Clone(c.nodes), func(n *Server) bool { return n == killed })
	wctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	err = poll(wctx, func() error {
		var err error
		if promoted, err = c.MasterOf(wctx, key); err == nil && promoted == killed {
			err = errors.New("the killed node is still named master")
		}
		if err == nil {
			err = healthy(wctx, live)
		}
		return err
	})
	if err != nil {
		c.t.Fatalf("redistest: the replica of %s was not promoted within %v: %v", killed.Addr(), failoverTimeout, err)
	}
	return killed, promoted
}

// onlineMaster returns host:port of the shard's online master ("" if none).
func onlineMaster(sh redis.ClusterShard) string {
	for _, nd := range sh.Nodes {
		if nd.Role == "master" && nd.Health == "online" {
			return net.JoinHostPort(nd.IP, strconv.FormatInt(nd.Port, 10))
		}
	}
	return ""
}

// byAddr returns the node of nodes at addr (nil if none).
func byAddr(nodes []*Server, addr string) *Server {
	if i := slices.IndexFunc(nodes, func(n *Server) bool { return n.Addr() == addr }); i >= 0 {
		return nodes[i]
	}
	return nil
}

// poll calls fn every 50 ms until it returns nil, or ctx is done: then the
// error says fn's last.
func poll(ctx context.Context, fn func() error) error {
	for {
		err := fn()
		if err == nil {
			return nil
		}
		if clock.Sleep(ctx, clock.Real(), 50*time.Millisecond) != nil {
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		}
	}
}

// healthy returns nil if each of nodes says cluster_state:ok and that every
// slot is served.
func healthy(ctx context.Context, nodes []*Server) error {
	for _, n := range nodes {
		if err := withNode(ctx, n, func(nc *redis.Client) error {
			info, err := nc.ClusterInfo(ctx).Result()
			if err == nil && !(strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384")) {
				err = fmt.Errorf("%s: cluster not ok yet", n.Addr())
			}
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
