package testlog

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAnnounceSaysWhyInOneLine: without a server binary, one line names the
// package, what is missing, that the tests are skipped and the Debian package
// to install; under CI the package fails instead.
func TestAnnounceSaysWhyInOneLine(t *testing.T) {
	t.Parallel()
	missing := errors.New("redis-sentinel not found")
	var b strings.Builder
	assert.True(t, announce(&b, "fleet", false, missing, "redis-sentinel"))
	assert.Equal(t, "fleet: redis-sentinel not found; the tests that need it are skipped (go test -v lists them); "+
		"install: apt-get install redis-sentinel\n", b.String())

	b.Reset()
	assert.False(t, announce(&b, "pgstore", true, missing, "postgresql"), "CI: the package fails")
	assert.Equal(t, "pgstore: FAIL: redis-sentinel not found; the tests that need it must not be skipped: CI is set; "+
		"install: apt-get install postgresql\n", b.String())
	assert.True(t, Announce("pgstore", nil, "postgresql"), "nothing missing: silent")
}
