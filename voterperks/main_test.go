package voterperks_test

import (
	"os"
	"testing"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// TestMain says in one line why the fleet tests skip when redis-server is
// missing (and fails under CI).
func TestMain(m *testing.M) {
	if !redistest.Announce("voterperks") {
		os.Exit(1)
	}
	os.Exit(m.Run())
}
