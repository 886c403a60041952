package httpx

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestStatusRecorder(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	r := &StatusRecorder{ResponseWriter: w}
	r.WriteHeader(http.StatusTeapot)
	r.WriteHeader(http.StatusOK) // superfluous: net/http keeps the first too
	assert.Equal(t, http.StatusTeapot, r.Status)

	r = &StatusRecorder{ResponseWriter: httptest.NewRecorder()}
	_, err := r.Write([]byte("x"))
	assert.NoError(t, err)
	assert.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, 0, (&StatusRecorder{}).Status, "nothing written: 0")
}

func TestLoopback(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"localhost", "127.0.0.1", "127.0.0.2", "::1"} {
		assert.True(t, Loopback(h), h)
	}
	for _, h := range []string{"", "example.com", "10.0.0.1", "[::1]", "localhost.example", "0.0.0.0"} {
		assert.False(t, Loopback(h), h)
	}
}

// TestWithinNamesWhatHangs: a wait that returns is waited for; one that hangs
// past the bound panics naming it, and is not waited for.
func TestWithinNamesWhatHangs(t *testing.T) {
	t.Parallel()
	ran := false
	Within("a quick wait", func() { ran = true })
	assert.True(t, ran)

	hung := make(chan struct{})
	defer close(hung)
	assert.PanicsWithValue(t, "still waiting after 10ms for the server's handlers", func() {
		within(10*time.Millisecond, "the server's handlers", func() { <-hung })
	})
}

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
