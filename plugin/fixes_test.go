package plugin_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestRefusedCommandsAreNotResent: a 422 for the definitions is final; the
// supervisor does not resend them every restart.
func TestRefusedCommandsAreNotResent(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	require.NoError(t, w.tg.Inject(topggtest.Fault{Method: http.MethodPut, Path: commandsPath, Status: http.StatusUnprocessableEntity, Times: 100}))
	var logs logBuffer
	cfg := w.config()
	cfg.Autopost = plugin.AutopostOff
	p := w.plugin(cfg, plugin.WithCommands(botCommands()), plugin.WithLogger(logs.Logger()))
	w.start(p)
	w.open()
	require.Eventually(t, func() bool { return w.count(http.MethodPut, commandsPath) == 1 }, wait, tick)
	// The supervisor's first restart would come after 1 s.
	assert.Never(t, func() bool { return w.count(http.MethodPut, commandsPath) > 1 }, 1500*time.Millisecond, 50*time.Millisecond)
	assert.Contains(t, logs.String(), "refused the slash commands")
}
