package pgtest

import (
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dblkit/go-topgg/internal/serverproc"
)

// installHint says how to get PostgreSQL on the Debian and Ubuntu machines
// the project runs on.
const installHint = "install: apt-get install postgresql"

// Shared is one server for a whole test package, started on the first
// [Shared.Pool] or [Shared.Server] call and stopped by [Shared.Main], so that
// a package whose selected tests need no PostgreSQL starts none.
type Shared struct {
	pkg string

	mu  sync.Mutex
	srv *Server
	err error
}

// New returns the package's Shared server; pkg names the package in the
// line [Shared.Main] prints when the binaries are missing.
func New(pkg string) *Shared { return &Shared{pkg: pkg} }

// Main is the package's TestMain body: it says in one line why the
// PostgreSQL tests skip when the binaries are missing (and fails the package
// when CI is set), runs the tests and stops the server. It returns the exit
// code.
func (sh *Shared) Main(m *testing.M) int {
	if !Announce(sh.pkg) {
		return 1
	}
	code := m.Run()
	sh.mu.Lock()
	srv := sh.srv
	sh.mu.Unlock()
	if srv != nil {
		srv.Stop()
	}
	return code
}

// Server returns the shared server, starting it on first use; it skips or
// fails t as [Require] does without the binaries.
func (sh *Shared) Server(t testing.TB) *Server {
	t.Helper()
	bin := Require(t)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.srv == nil && sh.err == nil {
		sh.srv, sh.err = start(bin)
	}
	if sh.err != nil {
		t.Fatalf("pgtest: shared server: %v", sh.err)
	}
	return sh.srv
}

// Pool returns a pool on a fresh database of the shared server, closed (and
// the database dropped) in t.Cleanup.
func (sh *Shared) Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return sh.Server(t).Pool(t)
}

// Announce is for the TestMain of package pkg, whose tests need PostgreSQL.
// Without the binaries it says in one line that the PostgreSQL tests are
// skipped and how to install them; with CI set, that the package fails, and
// returns false (TestMain exits 1: CI never skips silently). The line goes
// to /dev/tty when there is one (go test shows a passing package's output
// only with -v).
func Announce(pkg string) bool {
	if _, err := FindBin(); err == nil {
		return true
	}
	w, closeW := serverproc.AnnounceWriter()
	defer closeW()
	return announce(w, pkg, os.Getenv("CI") != "")
}

// announce writes the line for missing binaries and reports whether the tests
// may run.
func announce(w io.Writer, pkg string, ci bool) bool {
	if ci {
		_, _ = fmt.Fprintf(w, "%s: FAIL: PostgreSQL (initdb, postgres) not found and CI is set: the PostgreSQL tests must not be skipped; %s\n",
			pkg, installHint)
		return false
	}
	_, _ = fmt.Fprintf(w, "%s: PostgreSQL (initdb, postgres) not found; the tests that need it are skipped (go test -v lists them); %s\n",
		pkg, installHint)
	return true
}
