// Package redistest starts a real, throw-away redis-server for a test: a free
// 127.0.0.1 port, a temporary directory, AOF on with an fsync per write, so
// that a test can kill -9 the server, restart it on the same port and
// directory, and find what Redis acknowledged. There is deliberately no
// in-memory imitation of Redis: the fleet's promises (Lua atomicity, expiry,
// persistence) are Redis's, and only Redis can show them.
package redistest

import (
	"context"
	"crypto/tls"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/redis/go-redis/v9/maintnotifications"
	"go.uber.org/goleak"
)

// Server is one redis-server process owned by a test. Its methods are safe for
// concurrent use; the test's Cleanup stops the process and removes its files.
type Server struct {
	*testlog.Proc // Addr, Dir, Kill, Logs

	t        testing.TB
	password string
	tls      *tls.Config // a client's, with WithTLS
	extra    []string    // WithArgs
	monitor  int         // a sentinel's: the port of the master it monitors (0: a redis-server)
}

// Option changes how [Start] configures the server.
type Option func(*Server)

// WithPassword makes the server require password (requirepass).
func WithPassword(password string) Option {
	return func(s *Server) { s.password = password }
}

// WithArgs adds command-line arguments to the server's (after the
// package's own, so that they win): e.g. "--replicaof", "127.0.0.1 6379", or
// the cluster settings [StartCluster] uses.
func WithArgs(args ...string) Option {
	return func(s *Server) { s.extra = append(s.extra, args...) }
}

// Require returns the path of redis-server, or ends the test as
// [testlog.Need] does (a skip naming the package to install; under CI, a failure).
func Require(t testing.TB) string {
	t.Helper()
	return testlog.LookPath(t, "redis-server", "redis-server")
}

// Start starts a redis-server for t on a free 127.0.0.1 port in a temporary
// directory with appendonly yes and appendfsync always, waits (bounded) until
// it answers PING, and stops it in t.Cleanup.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, Proc: &testlog.Proc{Name: "redis-server", Dir: t.TempDir()}}
	for _, o := range opts {
		o(s)
	}
	bin := Require(t)
	var err error
	switch {
	case s.monitor != 0:
		s.Name, bin = "redis-sentinel", testlog.LookPath(t, "redis-sentinel", "redis-sentinel")
		err = s.writeSentinelConf()
	case s.tls != nil:
		err = s.makeCert()
	}
	s.Cmd = func() *exec.Cmd { return exec.Command(bin, s.args()...) }
	s.Ready = func(ctx context.Context) error {
		return withNode(ctx, s, func(c *redis.Client) error { return c.Ping(ctx).Err() })
	}
	if err == nil {
		err = s.Start()
	}
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("%s %s output:\n%s", s.Name, s.Addr(), s.Logs())
		}
	})
	return s
}

// URL returns a redis:// URL for the server (rediss:// with TLS), with the
// password if one is set.
func (s *Server) URL() string {
	u := url.URL{Scheme: "redis", Host: s.Addr(), Path: "/0"}
	if s.tls != nil {
		u.Scheme = "rediss"
	}
	if s.password != "" {
		u.User = url.UserPassword("", s.password)
	}
	return u.String()
}

// Client returns a new client for the server, closed in t.Cleanup.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	o := s.options()
	o.DialTimeout, o.ReadTimeout = 0, 0 // go-redis's defaults
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// options are a short-lived client's of the server (see [nodeOptions]).
func (s *Server) options() *redis.Options {
	o := nodeOptions(s.Addr())
	o.Password, o.TLSConfig, o.ReadTimeout = s.password, s.tls, time.Second
	return o
}

// nodeOptions are a client's of addr, set as fleet.NewUniversalClient sets
// them (go-redis's "auto" maintenance notifications race with a pinned Conn
// starting at once: go-redis v9.23, Redis 7), quick to give up a dial.
func nodeOptions(addr string) *redis.Options {
	return &redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialTimeout: 200 * time.Millisecond,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}}
}

// ClientOf returns a client of addr with its own pool (a separate process),
// set as fleet.NewUniversalClient sets it and quick to give up a dial, closed in
// t.Cleanup.
func ClientOf(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(nodeOptions(addr))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// withNode runs fn with a short-lived client of n.
func withNode(ctx context.Context, n *Server, fn func(*redis.Client) error) error {
	nc := redis.NewClient(n.options())
	defer nc.Close()
	return fn(nc)
}

// Restart starts the server again on the same port and directory (after
// [Server.Kill]; it kills a running server first) and waits until it answers.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.Proc.Restart(); err != nil {
		s.t.Fatalf("redistest: restart: %v", err)
	}
}

// Pause stops the server with SIGSTOP: it keeps its connections but answers
// nothing (a replica that acknowledges nothing, a master that hangs) until
// [Server.Resume]. Kill (and so the test's Cleanup) ends a paused server too.
func (s *Server) Pause() { s.Signal(syscall.SIGSTOP) }

// Resume continues a server stopped by [Server.Pause] (SIGCONT).
func (s *Server) Resume() { s.Signal(syscall.SIGCONT) }

func (s *Server) args() []string {
	a := []string{
		"--port", strconv.Itoa(s.Port()), "--bind", "127.0.0.1", "--dir", s.Dir,
		"--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning",
	}
	if s.monitor != 0 {
		return append([]string{s.file("sentinel.conf")}, a...)
	}
	a = append(a, "--appendonly", "yes", "--appendfsync", "always", "--save", "")
	if s.password != "" {
		a = append(a, "--requirepass", s.password)
	}
	a = append(a, s.extra...)
	if s.tls != nil {
		a[1] = "0" // no plain port
		a = append(a, "--tls-port", strconv.Itoa(s.Port()), "--tls-cert-file", s.file("cert.pem"),
			"--tls-key-file", s.file("key.pem"), "--tls-ca-cert-file", s.file("cert.pem"), "--tls-auth-clients", "no")
	}
	return a
}

// file returns the path of name in the server's directory.
func (s *Server) file(name string) string { return filepath.Join(s.Dir, name) }

// Announce is for the TestMain of package pkg, whose tests need redis-server
// (and redis-sentinel for [StartSentinel]): see [testlog.Announce].
func Announce(pkg string) bool {
	for _, bin := range []string{"redis-server", "redis-sentinel"} {
		if _, err := exec.LookPath(bin); err != nil {
			return testlog.Announce(pkg, err, bin)
		}
	}
	return true
}

// Main runs the tests of pkg and exits: it says in one line why the Redis
// tests skip, keeps go-redis's process-wide logger quiet (tests stop Redis on
// purpose: its pool would print every failed dial), and fails the package if
// a goroutine outlives the tests.
func Main(m *testing.M, pkg string) {
	if !Announce(pkg) {
		os.Exit(1)
	}
	logging.Disable()
	goleak.VerifyTestMain(m)
}
