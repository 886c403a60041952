package deploy_test

import (
	"os"
	"testing"

	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
)

// pg is the package's PostgreSQL, started by the first test that needs it.
var pg = pgstoretest.New("plugin/deploy")

// TestMain says in one line why the Redis or PostgreSQL tests skip when
// redis-server or PostgreSQL is missing (and fails under CI).
func TestMain(m *testing.M) {
	if !redistest.Announce("plugin/deploy") {
		os.Exit(1)
	}
	os.Exit(pg.Main(m))
}
