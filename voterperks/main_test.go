package voterperks_test

import (
	"os"
	"testing"

	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
)

// pg is the package's PostgreSQL, started by the first test that needs it.
var pg = pgstoretest.New("voterperks")

// TestMain turns the test binary into a process of the killed-leader test
// when asked (childMain); else it says in one line why the fleet or
// PostgreSQL tests skip when redis-server or PostgreSQL is missing (and
// fails under CI).
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	if !redistest.Announce("voterperks") {
		os.Exit(1)
	}
	os.Exit(pg.Main(m))
}
