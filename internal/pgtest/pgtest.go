// Package pgtest starts a real, throw-away PostgreSQL for tests: initdb into
// a temporary directory, a free 127.0.0.1 port, the unix socket in that
// directory, fsync on, run as an unprivileged user when the tests run as root
// (PostgreSQL refuses root), stopped and removed at the end. There is
// deliberately no imitation of PostgreSQL: the stores' promises (transactions,
// row locks, LISTEN/NOTIFY, durability through a kill) are PostgreSQL's, and
// only PostgreSQL can show them.
//
// One server per test package is the fast way (initdb takes a second or two):
//
//	var pg = pgtest.New("pgstore")
//
//	func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }
//
//	func TestX(t *testing.T) { pool := pg.Pool(t) } // a fresh database per test
//
// [Start] gives a test a server of its own (for [Server.Kill] and
// [Server.Restart] in crash tests).
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dblkit/go-topgg/internal/serverproc"
)

// startTimeout bounds initdb and the wait for a started server to answer.
const startTimeout = 60 * time.Second

// binGlob is where Debian's postgresql packages put the server binaries.
const binGlob = "/usr/lib/postgresql/*/bin"

// Superuser is the name of the server's superuser (no password: trust auth
// on 127.0.0.1 and the socket only).
const Superuser = "postgres"

// FindBin returns the directory holding initdb and postgres: the newest
// /usr/lib/postgresql/<version>/bin that has both, else the directory of
// initdb in PATH.
func FindBin() (string, error) {
	dirs, _ := filepath.Glob(binGlob)
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && isExec(filepath.Join(filepath.Dir(p), "postgres")) {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found under " + binGlob + " nor in PATH")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Require returns the binaries' directory, or ends the test: t.Skip naming
// the package to install, or t.Fatal when the CI environment variable is set
// (CI must run every PostgreSQL test, never skip it silently).
func Require(t testing.TB) string {
	t.Helper()
	bin, err := FindBin()
	if err == nil {
		return bin
	}
	msg := err.Error() + "; " + installHint + " to run the PostgreSQL tests"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: they must not be skipped)")
	}
	t.Skip(msg)
	return ""
}

// Server is one PostgreSQL server owned by a test or a test package. Its
// methods are safe for concurrent use.
type Server struct {
	bin  string
	dir  string // removed at stop; holds data/ and the socket
	port int
	cred *syscall.Credential // the unprivileged user when run as root, else nil

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been reaped
	logs *bytes.Buffer
	dbs  int // databases made by NewDatabase
}

// Start starts a server for t alone and stops it (removing its files) in
// t.Cleanup. It skips or fails t as [Require] does without the binaries.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Require(t)
	s, err := start(bin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// start runs initdb into a new temporary directory and starts the server.
func start(bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, logs: &bytes.Buffer{}}
	if err := s.setup(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	for range 5 { // a freed port may be taken by someone else before we bind it: try another
		if s.port, err = serverproc.FreePort(); err != nil {
			break
		}
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	_ = os.RemoveAll(dir)
	return nil, err
}

// setup picks the user the server runs as and runs initdb.
func (s *Server) setup() error {
	if os.Geteuid() == 0 {
		cred, err := unprivileged()
		if err != nil {
			return err
		}
		s.cred = cred
		if err := os.Chown(s.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	// --no-sync: initdb's own final fsync of a fresh directory buys nothing
	// (the server runs with fsync on; a SIGKILL loses no page cache).
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "initdb"), "-D", s.dataDir(), "-U", Superuser,
		"--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync")
	s.prepare(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %w: %s", err, out)
	}
	return nil
}

// unprivileged returns the credentials of the user "nobody" (PostgreSQL
// refuses to run as root).
func unprivileged() (*syscall.Credential, error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root and no user nobody to run PostgreSQL as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: false, Groups: []uint32{}}, nil
}

// prepare makes cmd run as the server's user, in its own process group (so
// that Kill reaches the backends too), with a neutral environment.
func (s *Server) prepare(cmd *exec.Cmd) {
	cmd.Dir = s.dir
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin", "HOME=" + s.dir, "TZ=UTC"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

func (s *Server) start() error {
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.dataDir(),
		"-p", strconv.Itoa(s.port), "-k", s.dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=on", "-c", "synchronous_commit=on", "-c", "max_connections=300",
		"-c", "shared_buffers=32MB", "-c", "log_min_messages=warning", "-c", "logging_collector=off")
	s.prepare(cmd)
	// A test binary that dies (a panic, a timeout) takes its server along.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	lw := &serverproc.LockedWriter{Mu: &s.mu, W: s.logs}
	cmd.Stdout, cmd.Stderr = lw, lw
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := s.waitReady(done); err != nil {
		s.Kill()
		return err
	}
	return nil
}

// waitReady waits (bounded) until the server accepts a connection.
func (s *Server) waitReady(done <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			_ = c.Close(context.Background())
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("postgres exited: %s", s.Logs())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not answer within %s: %w; logs: %s", startTimeout, err, s.Logs())
		}
		time.Sleep(50 * time.Millisecond) // a bounded poll for readiness
	}
}

// Port returns the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// URL returns a postgres:// URL for database db over TCP on 127.0.0.1.
func (s *Server) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(Superuser), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// SocketDir returns the directory of the server's unix socket.
func (s *Server) SocketDir() string { return s.dir }

// Logs returns what the server printed so far (for failure messages).
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// Kill sends SIGKILL to the postmaster and every backend and waits until the
// postmaster is gone: no shutdown checkpoint, as when a machine loses the
// process. What was committed survives (fsync is on); [Server.Restart]
// recovers it.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	serverproc.Within("pgtest: postgres to exit after SIGKILL", func() { <-done })
	s.waitGroupGone(cmd.Process.Pid)
}

// waitGroupGone waits (bounded) until no process of the group pgid is left:
// a backend still holding the shared memory would stop a restart.
func (s *Server) waitGroupGone(pgid int) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond) // a bounded poll for the kernel to reap them
	}
}

// Restart starts the server again on the same port and directory (after
// [Server.Kill]; it kills a running server first) and waits until it
// answers: PostgreSQL replays its WAL.
func (s *Server) Restart() error {
	s.Kill()
	var err error
	deadline := time.Now().Add(startTimeout)
	for { // the port may linger for a moment after the kill
		if err = s.start(); err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond) // a bounded retry of a failed start
	}
}

// Stop stops the server (fast shutdown, then SIGKILL if it lingers) and
// removes its directory.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	}
	s.Kill()
	_ = os.RemoveAll(s.dir)
}

// NewDatabase creates a new, empty database and returns its URL.
func (s *Server) NewDatabase(ctx context.Context) (name, dbURL string, err error) {
	s.mu.Lock()
	s.dbs++
	name = "t" + strconv.Itoa(s.dbs)
	s.mu.Unlock()
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", "", err
	}
	defer func() { _ = c.Close(context.Background()) }()
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", "", fmt.Errorf("create database %s: %w", name, err)
	}
	return name, s.URL(name), nil
}

// DropDatabase drops database name, closing its sessions.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer func() { _ = c.Close(context.Background()) }()
	_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// Database creates a fresh database for t, dropped in t.Cleanup, and returns
// its URL.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	name, u, err := s.NewDatabase(ctx)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		_ = s.DropDatabase(ctx, name)
	})
	return u
}

// Pool creates a fresh database for t and returns a pool on it; both are
// closed (the database dropped) in t.Cleanup.
func (s *Server) Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return OpenPool(t, s.Database(t))
}

// OpenPool opens a pool on dbURL, closed in t.Cleanup.
func OpenPool(t testing.TB, dbURL string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	p, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatalf("pgtest: pool: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}
