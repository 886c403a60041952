package pgstoretest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/jackc/pgx/v5"
)

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
	version := func(bin string) int { n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin))); return n }
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		_, err1 := exec.LookPath(filepath.Join(d, "initdb")) // with a slash: whether the file is executable
		_, err2 := exec.LookPath(filepath.Join(d, "postgres"))
		if err1 == nil && err2 == nil {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found under " + binGlob + " nor in PATH")
}

// server is one PostgreSQL process owned by a test or a test package. Its
// methods are safe for concurrent use.
type server struct {
	*testlog.Proc                     // Kill, Restart, Stop
	bin           string              // the binaries' directory
	cred          *syscall.Credential // the unprivileged user when run as root, else nil
	dbs           atomic.Int64        // databases made by database
}

// start runs initdb into a new temporary directory and starts the server.
func start(bin string) (*server, error) {
	dir, err := os.MkdirTemp("", "pgstoretest-")
	if err != nil {
		return nil, err
	}
	s := &server{bin: bin, Proc: &testlog.Proc{Name: "postgres", Dir: dir}} // Dir: data/ and the socket, removed at stop
	s.Cmd = func() *exec.Cmd {
		return s.command(context.Background(), "postgres", "-D", s.dataDir(), "-p", strconv.Itoa(s.Port()), "-k", s.Dir,
			"-c", "listen_addresses=127.0.0.1", "-c", "fsync=on", "-c", "synchronous_commit=on",
			"-c", "max_connections=300", "-c", "shared_buffers=32MB", "-c", "log_min_messages=warning",
			"-c", "logging_collector=off")
	}
	s.Ready = func(ctx context.Context) error { return s.exec(ctx, "SELECT 1") }
	if err = s.setup(); err == nil {
		err = s.Start()
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// setup picks the user the server runs as and runs initdb.
func (s *server) setup() error {
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		u, err := user.Lookup("nobody")
		if err != nil {
			return fmt.Errorf("running as root and no user nobody to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid) // numeric on Unix
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(s.Dir, uid, gid); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testlog.StartBound)
	defer cancel()
	// --no-sync: initdb's own final fsync of a fresh directory buys nothing
	// (the server runs with fsync on; a SIGKILL loses no page cache).
	initdb := s.command(ctx, "initdb", "-D", s.dataDir(), "-U", superuser, "--auth=trust", "--encoding=UTF8",
		"--no-locale", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, out)
	}
	return nil
}

// command returns the command of the binary name, run as the server's user
// in its directory, with a neutral environment.
func (s *server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin", "HOME=" + s.Dir, "TZ=UTC"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	return cmd
}

func (s *server) dataDir() string { return filepath.Join(s.Dir, "data") }

// url returns a postgres:// URL for database db over TCP on 127.0.0.1.
func (s *server) url(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(superuser), Host: s.Addr(), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// exec runs sql in the database postgres.
func (s *server) exec(ctx context.Context, sql string) error {
	c, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		return err
	}
	defer func() { _ = c.Close(context.Background()) }()
	_, err = c.Exec(ctx, sql)
	return err
}

// stop stops the server (fast shutdown, then SIGKILL if it lingers) and
// removes its directory.
func (s *server) stop() {
	s.Stop(syscall.SIGINT)
	_ = os.RemoveAll(s.Dir)
}

// database creates a fresh database for t, dropped in t.Cleanup, and returns
// its URL.
func (s *server) database(t testing.TB) string {
	t.Helper()
	name := "t" + strconv.FormatInt(s.dbs.Add(1), 10)
	ctx, cancel := context.WithTimeout(context.Background(), testlog.StartBound)
	defer cancel()
	if err := s.exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgstoretest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testlog.StartBound)
		defer cancel()
		_ = s.exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") // its sessions closed
	})
	return s.url(name)
}
