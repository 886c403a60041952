package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/redis/go-redis/v9"
)

// MasterName is the name the test sentinels monitor their master under.
const MasterName = "mymaster"

// downAfter is the sentinels' down-after-milliseconds: a dead master is
// replaced within a few times this. At 1 s, a promoted replica busy for a
// second on a loaded CI machine (go test runs packages side by side) was
// itself voted down and the restarted old master promoted back.
const downAfter = 2000 * time.Millisecond

// fastSync returns the arguments of a master that starts a replica's full
// sync at once, not after the default 5 s wait for more replicas (the
// diskless sync delay).
func fastSync() []string { return []string{"--repl-diskless-sync-delay", "0"} }

// Sentinel is a Sentinel-managed Redis owned by a test: one master and one
// replica (each a [Server] with AOF), watched by three redis-sentinel
// processes with quorum 2 and down-after-milliseconds 2000. Its methods are
// safe for concurrent use; the test's Cleanup stops every process.
type Sentinel struct {
	t         testing.TB
	nodes     []*Server // [0] started as master, [1] as its replica
	sentinels []*Server // redis-sentinel processes
}

// StartSentinel starts a master, its replica and three sentinels on free
// 127.0.0.1 ports, and waits (bounded) until the replica is in sync and
// every sentinel knows the replica and the other two sentinels.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	testlog.LookPath(t, "redis-sentinel", "redis-sentinel")
	master := Start(t, WithArgs(fastSync()...))
	replica := Start(t, WithArgs(append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(master.Port())}, fastSync()...)...))
	s := &Sentinel{t: t, nodes: []*Server{master, replica}}
	for range 3 {
		s.sentinels = append(s.sentinels, Start(t, func(p *Server) { p.monitor = master.Port() }))
	}
	ctx, cancel := context.WithTimeout(context.Background(), failoverTimeout)
	defer cancel()
	if err := poll(ctx, func() error { return s.settled(ctx, master) }); err != nil {
		t.Fatalf("redistest: the sentinels did not settle within %v: %v", failoverTimeout, err)
	}
	return s
}

// writeSentinelConf writes the configuration of a sentinel of s.monitor: the
// sentinel rewrites it as it learns the replica and the other sentinels.
func (s *Server) writeSentinelConf() error {
	conf := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 2\nsentinel down-after-milliseconds %[1]s %[3]d\n"+
		"sentinel failover-timeout %[1]s 3000\nsentinel parallel-syncs %[1]s 1\n", MasterName, s.monitor, downAfter.Milliseconds())
	return os.WriteFile(s.file("sentinel.conf"), []byte(conf), 0o600)
}

// SentinelAddrs returns host:port of the three sentinels.
func (s *Sentinel) SentinelAddrs() []string { return addrs(s.sentinels) }

// Client returns a new Sentinel (failover) client of the master, closed in
// t.Cleanup.
func (s *Sentinel) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: MasterName, SentinelAddrs: s.SentinelAddrs(),
		ContextTimeoutEnabled: true, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Master returns the node a majority of the sentinels name as master.
func (s *Sentinel) Master(ctx context.Context) (*Server, error) {
	votes := map[string]int{}
	for _, p := range s.sentinels {
		sc := redis.NewSentinelClient(p.options())
		a, err := sc.GetMasterAddrByName(ctx, MasterName).Result()
		_ = sc.Close()
		if err == nil && len(a) == 2 {
			votes[net.JoinHostPort(a[0], a[1])]++
		}
	}
	for addr, n := range votes {
		if node := byAddr(s.nodes, addr); n >= 2 && node != nil {
			return node, nil
		}
	}
	return nil, errors.New("no majority of the sentinels names a known master")
}

// KillMaster SIGKILLs the current master and waits (bounded) until the
// sentinels have promoted the other node and it answers as master. It
// returns the killed node (restart it with [Server.Restart]: the sentinels
// make it a replica of the new master) and the promoted one.
func (s *Sentinel) KillMaster(ctx context.Context) (killed, promoted *Server) {
	s.t.Helper()
	killed, err := s.Master(ctx)
	if err != nil {
		s.t.Fatalf("redistest: %v", err)
	}
	killed.Kill()
	s.WaitMaster(ctx, s.Other(killed))
	return killed, s.Other(killed)
}

// sentinelFailoverTimeout bounds a Sentinel failover: failoverTimeout, plus
// the 30 s of TILT mode, in which a sentinel whose timer was held for 2 s (a
// loaded machine; seen in CI) acts on nothing. Redis 7 cannot turn TILT off.
const sentinelFailoverTimeout = failoverTimeout + 30*time.Second

// Other returns the node that is not n.
func (s *Sentinel) Other(n *Server) *Server {
	if n == s.nodes[0] {
		return s.nodes[1]
	}
	return s.nodes[0]
}

// WaitMaster waits (bounded) until a majority of the sentinels name n as
// master and n answers ROLE as one (after a kill the test made itself).
func (s *Sentinel) WaitMaster(ctx context.Context, n *Server) {
	s.t.Helper()
	wctx, cancel := context.WithTimeout(ctx, sentinelFailoverTimeout)
	defer cancel()
	err := poll(wctx, func() error {
		m, err := s.Master(wctx)
		if err == nil {
			err = withNode(wctx, n, func(nc *redis.Client) error {
				role, err := nc.Do(wctx, "ROLE").Slice()
				if err == nil && (m != n || role[0] != "master") {
					err = errors.New("not master yet")
				}
				return err
			})
		}
		return err
	})
	if err != nil {
		s.t.Fatalf("redistest: the sentinels did not make %s master within %v: %v", n.Addr(), sentinelFailoverTimeout, err)
	}
}

// settled returns nil once every sentinel names master, knows its replica,
// and knows the two other sentinels (so that a failover can get its quorum
// and a leader at once), and the replica is in sync.
func (s *Sentinel) settled(ctx context.Context, master *Server) error {
	for _, p := range s.sentinels {
		sc := redis.NewSentinelClient(p.options())
		m, err := sc.Master(ctx, MasterName).Result()
		_ = sc.Close()
		if err == nil && (m["num-other-sentinels"] != "2" || m["num-slaves"] != "1" ||
			net.JoinHostPort(m["ip"], m["port"]) != master.Addr()) {
			err = fmt.Errorf("sentinel %s: %v", p.Addr(), m)
		}
		if err != nil {
			return err
		}
	}
	return withNode(ctx, master, func(nc *redis.Client) error {
		info, err := nc.Info(ctx, "replication").Result()
		if err == nil && !strings.Contains(info, "state=online") {
			err = errors.New("the replica is not in sync yet")
		}
		return err
	})
}
