// Package redistest starts a real, throw-away redis-server for a test: a free
// 127.0.0.1 port, a temporary directory, AOF on with an fsync per write, so
// that a test can kill -9 the server, restart it on the same port and
// directory, and find what Redis acknowledged. There is deliberately no
// in-memory imitation of Redis: the fleet's promises (Lua atomicity, expiry,
// persistence) are Redis's, and only Redis can show them.
package redistest

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// Binary is the name of the server executable looked up in PATH.
const Binary = "redis-server"

// startTimeout bounds the wait for a started server to answer PING.
const startTimeout = 10 * time.Second

// Server is one redis-server process owned by a test. Its methods are safe for
// concurrent use; the test's Cleanup stops the process and removes its files.
type Server struct {
	t        testing.TB
	bin      string
	dir      string
	port     int
	password string
	tls      bool           // WithTLS
	roots    *x509.CertPool // trusts the server's certificate, with TLS
	certFile string
	keyFile  string
	extra    []string // WithArgs
	monitor  int      // a sentinel's: the port of the master it monitors (0: a redis-server)

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been reaped
	logs *bytes.Buffer
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

// Require returns the path of redis-server, or ends the test: t.Skip naming the
// package to install, or t.Fatal when the CI environment variable is set
// (CI must run every fleet test, never skip it silently).
func Require(t testing.TB) string {
	t.Helper()
	return require(t, Binary, installHint)
}

// require returns the path of bin, or skips t (fails it under CI) naming hint.
func require(t testing.TB, bin, hint string) string {
	t.Helper()
	path, err := exec.LookPath(bin)
	if err == nil {
		return path
	}
	msg := bin + " not found in PATH; " + hint + " to run the tests that need it"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: these tests must not be skipped)")
	}
	t.Skip(msg)
	return ""
}

// Start starts a redis-server for t on a free 127.0.0.1 port in a temporary
// directory with appendonly yes and appendfsync always, waits (bounded) until
// it answers PING, and stops it in t.Cleanup.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, dir: t.TempDir()}
	for _, o := range opts {
		o(s)
	}
	if s.bin = Require(t); s.monitor != 0 {
		s.bin = RequireSentinel(t)
	}
	if s.tls {
		if err := s.makeCert(); err != nil {
			t.Fatalf("redistest: certificate: %v", err)
		}
	}
	var err error
	for range 5 { // a freed port may be taken by someone else before we bind it: try another
		if s.port, err = httpx.FreePort(); err != nil {
			t.Fatalf("redistest: free port: %v", err)
		}
		if err = s.start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.stop)
	return s
}

// Addr returns host:port of the server.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Dir returns the server's working directory (AOF files live there).
func (s *Server) Dir() string { return s.dir }

// URL returns a redis:// URL for the server (rediss:// with TLS), with the
// password if one is set.
func (s *Server) URL() string {
	scheme := "redis://"
	if s.tls {
		scheme = "rediss://"
	}
	if s.password != "" {
		return scheme + ":" + s.password + "@" + s.Addr() + "/0"
	}
	return scheme + s.Addr() + "/0"
}

// Client returns a new client for the server, closed in t.Cleanup.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	o := s.options()
	o.DialTimeout = 0 // go-redis's default
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// options are a client's of the server, set as fleet.NewUniversalClient sets
// them, quick to give up a dial.
func (s *Server) options() *redis.Options {
	o := nodeOptions(s.Addr())
	o.Password, o.TLSConfig = s.password, s.tlsConfig()
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

// Kill sends SIGKILL to the server and waits until the process is gone: no
// shutdown, no final fsync, as when a machine loses the process.
func (s *Server) Kill() {
	s.t.Helper()
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	httpx.Within("redistest: "+filepath.Base(s.bin)+" to exit after SIGKILL", func() { <-done })
	s.mu.Lock()
	s.cmd = nil
	s.mu.Unlock()
}

// Restart starts the server again on the same port and directory (after
// [Server.Kill]; it kills a running server first) and waits until it answers.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	deadline := time.Now().Add(startTimeout)
	for { // the port may linger for a moment after the kill
		if err = s.start(); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // a bounded retry of a failed start, not a wait for a result
	}
	if err != nil {
		s.t.Fatalf("redistest: restart: %v", err)
	}
}

// Logs returns what the server printed so far (for failure messages).
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

func (s *Server) args() []string {
	a := []string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning",
	}
	if s.monitor != 0 {
		return append([]string{filepath.Join(s.dir, "sentinel.conf")}, a...)
	}
	a = append(a, "--appendonly", "yes", "--appendfsync", "always", "--save", "")
	if s.password != "" {
		a = append(a, "--requirepass", s.password)
	}
	a = append(a, s.extra...)
	if s.tls {
		a[1] = "0" // no plain port
		a = append(a, "--tls-port", strconv.Itoa(s.port), "--tls-cert-file", s.certFile,
			"--tls-key-file", s.keyFile, "--tls-ca-cert-file", s.certFile, "--tls-auth-clients", "no")
	}
	return a
}

func (s *Server) start() error {
	if s.monitor != 0 {
		if err := s.writeSentinelConf(); err != nil {
			return err
		}
	}
	cmd := exec.Command(s.bin, s.args()...)
	cmd.Dir = s.dir
	logs := &bytes.Buffer{}
	lw := &httpx.LockedWriter{Mu: &s.mu, W: logs}
	cmd.Stdout, cmd.Stderr = lw, lw
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done, s.logs = cmd, done, logs
	s.mu.Unlock()
	if err := s.waitReady(done); err != nil {
		s.Kill()
		return fmt.Errorf("%w; server output:\n%s", err, s.Logs())
	}
	return nil
}

func (s *Server) waitReady(exited <-chan struct{}) error {
	c := redis.NewClient(s.options())
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		err := c.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited before answering PING", filepath.Base(s.bin))
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer PING within %v: %w", filepath.Base(s.bin), startTimeout, err)
		case <-time.After(20 * time.Millisecond): // poll interval of a bounded readiness wait
		}
	}
}

func (s *Server) stop() {
	s.Kill()
	// Keep the AOF of a failed test for inspection? t.TempDir removes it; the
	// server's own log is printed on failure instead.
	if s.t.Failed() {
		s.t.Logf("%s %s output:\n%s", filepath.Base(s.bin), s.Addr(), s.Logs())
	}
	_ = os.RemoveAll(filepath.Join(s.dir, "appendonlydir"))
}

// installHint says how to get redis-server on the Debian and Ubuntu machines
// the project runs on.
const installHint = "install: apt-get install redis-server"

// Announce is for the TestMain of package pkg, whose tests need redis-server.
// Without it in PATH, it says in one line that the Redis tests are skipped and
// how to install it; with CI set, that the package fails, and returns false
// (TestMain exits 1: CI never skips silently). The line goes to /dev/tty when
// there is one (go test shows a passing package's output only with -v).
//
// The same goes for redis-sentinel (the Sentinel tests, see [StartSentinel]):
// without it, one line says those tests are skipped and how to install it.
func Announce(pkg string) bool {
	for _, b := range [][2]string{{Binary, installHint}, {SentinelBinary, sentinelInstallHint}} {
		if _, err := exec.LookPath(b[0]); err != nil {
			w, closeW := httpx.AnnounceWriter()
			defer closeW()
			return announce(w, pkg, os.Getenv("CI") != "", b[0], b[1])
		}
	}
	return true
}

// announce writes the line for a missing bin and reports whether the tests may run.
func announce(w io.Writer, pkg string, ci bool, bin, hint string) bool {
	if ci {
		_, _ = fmt.Fprintf(w, "%s: FAIL: %s not found in PATH and CI is set: the tests that need it must not be skipped; %s\n",
			pkg, bin, hint)
		return false
	}
	_, _ = fmt.Fprintf(w, "%s: %s not found in PATH; the tests that need it are skipped (go test -v lists them); %s\n",
		pkg, bin, hint)
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
	redis.SetLogger(quiet{})
	goleak.VerifyTestMain(m)
}

// quiet is a go-redis logger that prints nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
