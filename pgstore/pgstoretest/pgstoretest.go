// Package pgstoretest starts a real, throwaway PostgreSQL for tests: initdb
// into a temporary directory, a free 127.0.0.1 port, trust authentication,
// fsync on, run as the user "nobody" when the tests run as root (PostgreSQL
// refuses root), stopped and removed at the end. Without PostgreSQL's
// binaries a test skips, naming the package to install, or fails when the
// CI environment variable is set.
//
// A server for one test (initdb takes a second or two):
//
//	store, err := pgstore.Open(ctx, pgstoretest.Start(t).Pool(t), pgstore.Config{})
//
// One server for a whole test package, each test on a fresh database:
//
//	var pg = pgstoretest.New("mybot")
//
//	func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }
//
//	func TestX(t *testing.T) { dbURL := pg.URL(t) }
package pgstoretest

import (
	"context"
	"sync"
	"testing"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Server is a throwaway PostgreSQL, started on first use. Its methods are
// safe for concurrent use.
type Server struct {
	pkg string

	mu  sync.Mutex
	srv *server
	err error
}

// New returns a test package's server, started by the first URL or Pool
// call and stopped by [Server.Main]; pkg names the package in Main's notice.
func New(pkg string) *Server { return &Server{pkg: pkg} }

// Start starts a server for t alone and stops it, removing its files, in
// t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{}
	s.server(t)
	t.Cleanup(func() { s.srv.stop() })
	return s
}

// Main is a TestMain body: it runs the tests and stops the server. Without
// PostgreSQL it says so in one line, and fails the package when CI is set.
// It returns the exit code.
func (s *Server) Main(m *testing.M) int {
	if _, err := findBin(); !testlog.Announce(s.pkg, err, "postgresql") {
		return 1
	}
	code := m.Run()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.stop()
	}
	return code
}

// URL returns the postgres:// URL of a fresh, empty database, dropped in
// t.Cleanup.
func (s *Server) URL(t testing.TB) string {
	t.Helper()
	return s.server(t).database(t)
}

// Pool returns a pool on a fresh, empty database; both are closed (the
// database dropped) in t.Cleanup.
func (s *Server) Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), s.URL(t)) // connects on first use
	if err != nil {
		t.Fatalf("pgstoretest: pool: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// Kill kills the server as a lost machine would (SIGKILL, no checkpoint);
// what was committed survives [Server.Restart].
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.server(t).Kill()
}

// Restart starts the server again on its port and data (killing it first if
// it runs) and returns once it answers; it fails t if it cannot.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.server(t).Restart(); err != nil {
		t.Fatalf("pgstoretest: restart: %v", err)
	}
}

// server returns the running server, starting it on first use; it skips or
// fails t without the binaries.
func (s *Server) server(t testing.TB) *server {
	t.Helper()
	bin, err := findBin()
	testlog.Need(t, err, "postgresql")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil && s.err == nil {
		s.srv, s.err = start(bin)
	}
	if s.err != nil {
		t.Fatalf("pgstoretest: %v", s.err)
	}
	return s.srv
}
