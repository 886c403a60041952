package voterewards_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// countLines counts the log lines that contain every part.
func countLines(log string, parts ...string) int {
	n := 0
	for line := range strings.Lines(log) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// TestRefusedTokenLoggedOncePerSpell: a poll refused with a 401 is the
// client's to report (once, at error level, with the hint); the poller logs
// the first failure of the spell as a warning and the repeats at debug
// level, and starts again after a success.
func TestRefusedTokenLoggedOncePerSpell(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var buf testlog.Buffer
	client := newClient(t, srv, topgg.WithLogger(buf.Logger()))
	const warn, debug = `level=WARN msg="poll failed: Top.gg refuses the token"`, `level=DEBUG msg="poll failed: Top.gg refuses the token"`
	spell := func(n int) {
		require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/*", Status: http.StatusUnauthorized, Times: n}))
	}

	spell(4)
	_ = startPoller(t, client, voterewards.Config{OnReward: newRecorder().handle, Store: voterewards.NewMemoryStore(),
		Interval: 5 * time.Millisecond, Logger: buf.Logger()})
	// The spell ends when the faults are spent: the client says so.
	require.Eventually(t, func() bool { return strings.Contains(buf.String(), "accepts the token again") },
		10*time.Second, time.Millisecond)
	log := buf.String()
	assert.Equal(t, 1, countLines(log, warn), log)
	assert.Equal(t, 3, countLines(log, debug), log)
	assert.Zero(t, countLines(log, "level=ERROR", "poll failed"), "a refused token is no poll error of its own: %s", log)
	assert.Equal(t, 1, countLines(log, "level=ERROR", "refused the token", "check="), "the client's one error, with what to check")

	// A new spell after a success is reported again.
	spell(2)
	require.Eventually(t, func() bool { return countLines(buf.String(), "accepts the token again") == 2 },
		10*time.Second, time.Millisecond)
	log = buf.String()
	assert.Equal(t, 2, countLines(log, warn), log)
	assert.Equal(t, 4, countLines(log, debug), log)
	assert.Zero(t, countLines(log, "level=ERROR", "poll failed"), log)
}
