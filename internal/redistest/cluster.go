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
	"github.com/dblkit/go-topgg/internal/httpx"
)

// clusterNodeTimeout is the cluster-node-timeout of the test clusters: a
// dead master is replaced by its replica within about twice this.
const clusterNodeTimeout = 1000 * time.Millisecond

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
	cli := httpx.LookPath(t, "redis-cli", "redis-tools")
	c := &Cluster{t: t}
	for range 6 {
		c.nodes = append(c.nodes, Start(t, WithArgs("--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(clusterNodeTimeout.Milliseconds(), 10),
			// A replica may be promoted however long it was cut off: the
			// tests kill masters on purpose, and must not stall on a
			// replica Redis finds too stale.
			"--cluster-replica-validity-factor", "0", fastSync()[0], fastSync()[1])))
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), failoverTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := poll(ctx, func() error { return c.healthy(ctx, c.nodes) }); err != nil {
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

// Nodes returns the six nodes, in the order they were started.
func (c *Cluster) Nodes() []*Server { return slices.Clone(c.nodes) }

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
	slot, err := c.keySlot(ctx, key)
	if err != nil {
		return nil, err
	}
	return c.masterOfSlot(ctx, slot)
}

// KillMasterOf SIGKILLs the master of key's slot and waits (bounded) until
// its replica has been promoted: the replica says it is master of the slot
// and every live node says cluster_state:ok. It returns the killed node
// (restart it with [Server.Restart]: it rejoins as a replica) and the
// promoted one.
func (c *Cluster) KillMasterOf(ctx context.Context, key string) (killed, promoted *Server) {
	c.t.Helper()
	slot, err := c.keySlot(ctx, key)
	if err != nil {
		c.t.Fatalf("redistest: %v", err)
	}
	killed, err = c.masterOfSlot(ctx, slot)
	if err != nil {
		c.t.Fatalf("redistest: %v", err)
	}
	killed.Kill()
	live := slices.DeleteFunc(c.Nodes(), func(n *Server) bool { return n == killed })
	wctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	err = poll(wctx, func() error {
		var err error
		if promoted, err = c.masterOfSlot(wctx, slot); err == nil && promoted == killed {
			err = errors.New("the killed node is still named master")
		}
		if err == nil {
			err = c.healthy(wctx, live)
		}
		return err
	})
	if err != nil {
		c.t.Fatalf("redistest: the replica of %s was not promoted within %v: %v", killed.Addr(), failoverTimeout, err)
	}
	return killed, promoted
}

// keySlot asks a live node for key's hash slot.
func (c *Cluster) keySlot(ctx context.Context, key string) (int64, error) {
	var err error
	for _, n := range c.nodes {
		var slot int64
		if err = withNode(ctx, n, func(nc *redis.Client) error {
			slot, err = nc.ClusterKeySlot(ctx, key).Result()
			return err
		}); err == nil {
			return slot, nil
		}
	}
	return 0, fmt.Errorf("no node answers CLUSTER KEYSLOT: %w", err)
}

// masterOfSlot returns the node that every live node naming an online
// master for slot names (CLUSTER SHARDS).
func (c *Cluster) masterOfSlot(ctx context.Context, slot int64) (*Server, error) {
	var found *Server
	for _, n := range c.nodes {
		var addr string
		err := withNode(ctx, n, func(nc *redis.Client) error {
			shards, err := nc.ClusterShards(ctx).Result()
			for _, sh := range shards {
				if servesSlot(sh, slot) {
					addr = onlineMaster(sh)
				}
			}
			return err
		})
		if err != nil || addr == "" {
			continue // a dead node, or one that lost the slot's master for now
		}
		m := byAddr(c.nodes, addr)
		if m == nil || (found != nil && found != m) {
			return nil, fmt.Errorf("the nodes disagree on slot %d's master", slot)
		}
		found = m
	}
	if found == nil {
		return nil, fmt.Errorf("no live node names a master for slot %d", slot)
	}
	return found, nil
}

func servesSlot(sh redis.ClusterShard, slot int64) bool {
	for _, r := range sh.Slots {
		if r.Start <= slot && slot <= r.End {
			return true
		}
	}
	return false
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
func (c *Cluster) healthy(ctx context.Context, nodes []*Server) error {
	for _, n := range nodes {
		err := withNode(ctx, n, func(nc *redis.Client) error {
			info, err := nc.ClusterInfo(ctx).Result()
			if err != nil {
				return err
			}
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
				return fmt.Errorf("%s: cluster not ok yet", n.Addr())
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
