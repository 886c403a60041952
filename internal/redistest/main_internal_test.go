package redistest

import (
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
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
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

// TestAnnounceSaysWhyInOneLine: without redis-server, one line names the
// package, says the tests are skipped and how to install the server; under CI
// the package fails instead.
func TestAnnounceSaysWhyInOneLine(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	assert.True(t, announce(&b, "fleet", false, Binary, installHint))
	assert.Equal(t, "fleet: redis-server not found in PATH; the tests that need it are skipped (go test -v lists them); "+
		"install: apt-get install redis-server\n", b.String())

	b.Reset()
	assert.False(t, announce(&b, "fleet", true, Binary, installHint), "CI: the package fails")
	assert.Equal(t, 1, strings.Count(b.String(), "\n"))
	assert.Contains(t, b.String(), "fleet: FAIL: redis-server not found")
	assert.Contains(t, b.String(), "apt-get install redis-server")
}

// TestAnnounceIsSilentWithRedis: with redis-server in PATH (as on this
// project's machines) Announce says nothing and lets the tests run.
func TestAnnounceIsSilentWithRedis(t *testing.T) {
	Require(t)
	assert.True(t, Announce("redistest"))
}

// TestAnnounceSentinelSaysWhyInOneLine: without redis-sentinel, one line
// says the Sentinel tests are skipped and how to install it; under CI the
// package fails instead.
func TestAnnounceSentinelSaysWhyInOneLine(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	assert.True(t, announce(&b, "fleet", false, SentinelBinary, sentinelInstallHint))
	assert.Equal(t, "fleet: redis-sentinel not found in PATH; the tests that need it are skipped (go test -v lists them); "+
		"install: apt-get install redis-sentinel\n", b.String())
	b.Reset()
	assert.False(t, announce(&b, "fleet", true, SentinelBinary, sentinelInstallHint), "CI: the package fails")
	assert.Equal(t, 1, strings.Count(b.String(), "\n"))
	assert.Contains(t, b.String(), "fleet: FAIL: redis-sentinel not found")
}
