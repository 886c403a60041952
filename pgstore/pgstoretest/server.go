package pgstoretest

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

	"github.com/dblkit/go-topgg/internal/httpx"
)

// startTimeout bounds initdb and the wait for a started server to answer.
const startTimeout = 60 * time.Second

// binGlob is where Debian's postgresql packages put the server binaries.
const binGlob = "/usr/lib/postgresql/*/bin"

// superuser is the name of the server's superuser (no password: trust auth
// on 127.0.0.1 and the socket only).
const superuser = "postgres"

// findBin returns the directory holding initdb and postgres: the newest
// /usr/lib/postgresql/<version>/bin that has both, else the directory of
// initdb in PATH.
func findBin() (string, error) {
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

// requireBin returns the binaries' directory, or ends the test: t.Skip naming
// the package to install, or t.Fatal when the CI environment variable is set
// (CI must run every PostgreSQL test, never skip it silently).
func requireBin(t testing.TB) string {
	t.Helper()
	bin, err := findBin()
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

// server is one PostgreSQL process owned by a test or a test package. Its
// methods are safe for concurrent use.
type server struct {
	bin  string
	dir  string // removed at stop; holds data/ and the socket
	port int
	cred *syscall.Credential // the unprivileged user when run as root, else nil

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been reaped
	out  *bytes.Buffer
	dbs  int // databases made by newDatabase
}

// start runs initdb into a new temporary directory and starts the server.
func start(bin string) (*server, error) {
	dir, err := os.MkdirTemp("", "pgstoretest-")
	if err != nil {
		return nil, err
	}
	s := &server{bin: bin, dir: dir, out: &bytes.Buffer{}}
	if err := s.setup(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	for range 5 { // a freed port may be taken by someone else before we bind it: try another
		if s.port, err = httpx.FreePort(); err != nil {
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
func (s *server) setup() error {
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
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "initdb"), "-D", s.dataDir(), "-U", superuser,
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
func (s *server) prepare(cmd *exec.Cmd) {
	cmd.Dir = s.dir
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin", "HOME=" + s.dir, "TZ=UTC"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
}

func (s *server) dataDir() string { return filepath.Join(s.dir, "data") }

func (s *server) start() error {
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.dataDir(),
		"-p", strconv.Itoa(s.port), "-k", s.dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=on", "-c", "synchronous_commit=on", "-c", "max_connections=300",
		"-c", "shared_buffers=32MB", "-c", "log_min_messages=warning", "-c", "logging_collector=off")
	s.prepare(cmd)
	// A test binary that dies (a panic, a timeout) takes its server along.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	lw := &httpx.LockedWriter{Mu: &s.mu, W: s.out}
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
		s.kill()
		return err
	}
	return nil
}

// waitReady waits (bounded) until the server accepts a connection.
func (s *server) waitReady(done <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.url("postgres"))
		cancel()
		if err == nil {
			_ = c.Close(context.Background())
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("postgres exited: %s", s.logs())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not answer within %s: %w; logs: %s", startTimeout, err, s.logs())
		}
		time.Sleep(50 * time.Millisecond) // a bounded poll for readiness
	}
}

// url returns a postgres:// URL for database db over TCP on 127.0.0.1.
func (s *server) url(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(superuser), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// logs returns what the server printed so far (for failure messages).
func (s *server) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// kill sends SIGKILL to the postmaster and every backend and waits until the
// postmaster is gone: no shutdown checkpoint, as when a machine loses the
// process. What was committed survives (fsync is on); [server.restart]
// recovers it.
func (s *server) kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	httpx.Within("pgstoretest: postgres to exit after SIGKILL", func() { <-done })
	s.waitGroupGone(cmd.Process.Pid)
}

// waitGroupGone waits (bounded) until no process of the group pgid is left:
// a backend still holding the shared memory would stop a restart.
func (s *server) waitGroupGone(pgid int) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond) // a bounded poll for the kernel to reap them
	}
}

// restart starts the server again on the same port and directory (after
// [server.kill]; it kills a running server first) and waits until it
// answers: PostgreSQL replays its WAL.
func (s *server) restart() error {
	s.kill()
	var err error
	deadline := time.Now().Add(startTimeout)
	for { // the port may linger for a moment after the kill
		if err = s.start(); err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond) // a bounded retry of a failed start
	}
}

// stop stops the server (fast shutdown, then SIGKILL if it lingers) and
// removes its directory.
func (s *server) stop() {
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
	s.kill()
	_ = os.RemoveAll(s.dir)
}

// newDatabase creates a new, empty database and returns its URL.
func (s *server) newDatabase(ctx context.Context) (name, dbURL string, err error) {
	s.mu.Lock()
	s.dbs++
	name = "t" + strconv.Itoa(s.dbs)
	s.mu.Unlock()
	c, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		return "", "", err
	}
	defer func() { _ = c.Close(context.Background()) }()
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", "", fmt.Errorf("create database %s: %w", name, err)
	}
	return name, s.url(name), nil
}

// dropDatabase drops database name, closing its sessions.
func (s *server) dropDatabase(ctx context.Context, name string) error {
	c, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		return err
	}
	defer func() { _ = c.Close(context.Background()) }()
	_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// database creates a fresh database for t, dropped in t.Cleanup, and returns
// its URL.
func (s *server) database(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	name, u, err := s.newDatabase(ctx)
	if err != nil {
		t.Fatalf("pgstoretest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		_ = s.dropDatabase(ctx, name)
	})
	return u
}

// openPool opens a pool on dbURL, closed in t.Cleanup.
func openPool(t testing.TB, dbURL string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	p, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatalf("pgstoretest: pool: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}
