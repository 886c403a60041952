package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
)

// SentinelBinary is the name of the Sentinel executable looked up in PATH
// (Debian's and Ubuntu's redis-sentinel package).
const SentinelBinary = "redis-sentinel"

// sentinelInstallHint says how to get redis-sentinel.
const sentinelInstallHint = "install: apt-get install redis-sentinel"

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
	sentinels []*sentinelProc
}

// sentinelProc is one redis-sentinel process.
type sentinelProc struct {
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	logs bytes.Buffer
}

// RequireSentinel returns the path of redis-sentinel, or ends the test:
// t.Skip naming the package to install, or t.Fatal when CI is set.
func RequireSentinel(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath(SentinelBinary)
	if err == nil {
		return bin
	}
	msg := "redis-sentinel not found in PATH; " + sentinelInstallHint + " to run the Sentinel tests"
	if ciSet() {
		t.Fatal(msg + " (CI is set: the Sentinel tests must not be skipped)")
	}
	t.Skip(msg)
	return ""
}

func ciSet() bool { return os.Getenv("CI") != "" }

// StartSentinel starts a master, its replica and three sentinels on free
// 127.0.0.1 ports, and waits (bounded) until the replica is in sync and
// every sentinel knows the replica and the other two sentinels.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	bin := RequireSentinel(t)
	s := &Sentinel{t: t}
	master := Start(t, WithArgs(fastSync()...))
	replica := Start(t, WithArgs(append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(master.port)}, fastSync()...)...))
	s.nodes = []*Server{master, replica}
	for range 3 {
		p, err := startSentinelProc(bin, t.TempDir(), master.port)
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		s.sentinels = append(s.sentinels, p)
		t.Cleanup(func() {
			p.stop()
			if t.Failed() {
				t.Logf("redis-sentinel %d output:\n%s", p.port, p.output())
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), failoverTimeout)
	defer cancel()
	for !s.settled(ctx, master) {
		if clock.Sleep(ctx, clock.Real(), 50*time.Millisecond) != nil {
			t.Fatalf("redistest: the sentinels did not settle within %v", failoverTimeout)
		}
	}
	return s
}

func startSentinelProc(bin, dir string, masterPort int) (*sentinelProc, error) {
	var err error
	for range 5 { // a freed port may be taken before we bind it: try another
		var port int
		if port, err = httpx.FreePort(); err != nil {
			return nil, err
		}
		conf := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndaemonize no\ndir %s\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s %d\n"+
			"sentinel failover-timeout %s 3000\nsentinel parallel-syncs %s 1\n",
			port, dir, MasterName, masterPort, MasterName, downAfter.Milliseconds(), MasterName, MasterName)
		path := filepath.Join(dir, "sentinel.conf")
		if err = os.WriteFile(path, []byte(conf), 0o600); err != nil {
			return nil, err
		}
		p := &sentinelProc{port: port, dir: dir, done: make(chan struct{})}
		if err = p.start(bin, path); err == nil {
			return p, nil
		}
	}
	return nil, err
}

func (p *sentinelProc) start(bin, conf string) error {
	p.cmd = exec.Command(bin, conf)
	p.cmd.Dir = p.dir
	lw := &httpx.LockedWriter{Mu: &p.mu, W: &p.logs}
	p.cmd.Stdout, p.cmd.Stderr = lw, lw
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	c := redis.NewClient(&redis.Options{Addr: p.addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		err := c.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("redis-sentinel exited before answering PING; output:\n%s", p.output())
		case <-ctx.Done():
			p.stop()
			return fmt.Errorf("redis-sentinel did not answer PING within %v: %w", startTimeout, err)
		case <-time.After(20 * time.Millisecond): // poll interval of a bounded readiness wait
		}
	}
}

func (p *sentinelProc) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

func (p *sentinelProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

func (p *sentinelProc) stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	httpx.Within("redistest: redis-sentinel to exit after SIGKILL", func() { <-p.done })
}

// SentinelAddrs returns host:port of the three sentinels.
func (s *Sentinel) SentinelAddrs() []string {
	out := make([]string, len(s.sentinels))
	for i, p := range s.sentinels {
		out[i] = p.addr()
	}
	return out
}

// Nodes returns the two redis-servers: [0] started as master, [1] as replica.
func (s *Sentinel) Nodes() []*Server { return []*Server{s.nodes[0], s.nodes[1]} }

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
		sc := redis.NewSentinelClient(&redis.Options{Addr: p.addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond,
			ReadTimeout: time.Second})
		a, err := sc.GetMasterAddrByName(ctx, MasterName).Result()
		_ = sc.Close()
		if err == nil && len(a) == 2 {
			votes[net.JoinHostPort(a[0], a[1])]++
		}
	}
	for addr, n := range votes {
		if n >= 2 {
			for _, node := range s.nodes {
				if node.Addr() == addr {
					return node, nil
				}
			}
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
	promoted = s.Other(killed)
	s.WaitMaster(ctx, promoted)
	return killed, promoted
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
	for {
		m, err := s.Master(wctx)
		if err == nil && m == n && isMaster(wctx, n) {
			return
		}
		if clock.Sleep(wctx, clock.Real(), 50*time.Millisecond) != nil {
			s.t.Fatalf("redistest: the sentinels did not make %s master within %v", n.Addr(), sentinelFailoverTimeout)
			return
		}
	}
}

// settled says whether every sentinel names master, knows its replica, and
// knows the two other sentinels (so that a failover can get its quorum and a
// leader at once), and whether the replica is in sync.
func (s *Sentinel) settled(ctx context.Context, master *Server) bool {
	for _, p := range s.sentinels {
		sc := redis.NewSentinelClient(&redis.Options{Addr: p.addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond,
			ReadTimeout: time.Second})
		m, err1 := sc.Master(ctx, MasterName).Result()
		_ = sc.Close()
		if err1 != nil || m["num-other-sentinels"] != "2" || m["num-slaves"] != "1" ||
			net.JoinHostPort(m["ip"], m["port"]) != master.Addr() {
			return false
		}
	}
	var synced bool
	_ = withNode(ctx, master, func(nc *redis.Client) error {
		info, err := nc.Info(ctx, "replication").Result()
		synced = err == nil && bytes.Contains([]byte(info), []byte("state=online"))
		return err
	})
	return synced
}

// isMaster says whether n answers ROLE as a master.
func isMaster(ctx context.Context, n *Server) bool {
	var ok bool
	_ = withNode(ctx, n, func(nc *redis.Client) error {
		role, err := nc.Do(ctx, "ROLE").Slice()
		ok = err == nil && len(role) > 0 && role[0] == "master"
		return err
	})
	return ok
}
