package redistest

import (
	"os"
	"testing"

	"github.com/redis/go-redis/v9/logging"
	"github.com/stretchr/testify/assert"
)

// TestMain says in one line why the tests that start a server skip when
// redis-server is missing.
func TestMain(m *testing.M) {
	if !Announce("internal/redistest") {
		os.Exit(1)
	}
	// The failover tests kill servers on purpose: go-redis would print every
	// failed dial to stderr through its process-wide logger.
	logging.Disable()
	os.Exit(m.Run())
}

// TestAnnounceIsSilentWithRedis: with redis-server in PATH (as on this
// project's machines) Announce says nothing and lets the tests run.
func TestAnnounceIsSilentWithRedis(t *testing.T) {
	Require(t)
	assert.True(t, Announce("redistest"))
}
