package plugin_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneProcessBotLinksNoRedisPostgresOrPrometheus builds a bot on the
// plugin alone, in one process (example-bot/minimal), and sums the sizes of
// its symbols by dependency: a bot that does not use the fleet, the
// PostgreSQL store or metrics must not carry their code (issue 19: what a
// bot does not use, it must not pay for in memory either, and linked code is
// resident). Before, the plugin held a *fleet.Fleet in its structs and
// asserted the vote store to *pgstore.Store, which kept 665 KB of go-redis,
// 64 KB of fleet and 274 KB of pgx in such a bot.
func TestOneProcessBotLinksNoRedisPostgresOrPrometheus(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command builds the probe")
	bin := filepath.Join(t.TempDir(), "pluginonly")
	build := exec.CommandContext(t.Context(), goTool, "build", "-o", bin, "github.com/dblkit/go-topgg/example-bot/minimal")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	nm := exec.CommandContext(t.Context(), goTool, "tool", "nm", "-size", bin)
	out, err = nm.Output()
	require.NoError(t, err)

	sizes := linkedBytes(t, out, map[string]string{
		"go-redis":   "github.com/redis/go-redis/",
		"fleet":      "github.com/dblkit/go-topgg/fleet.",
		"pgx":        "github.com/jackc/",
		"pgstore":    "github.com/dblkit/go-topgg/pgstore.",
		"prometheus": "github.com/prometheus/",
		"protobuf":   "google.golang.org/protobuf/",
		"plugin":     "github.com/dblkit/go-topgg/plugin.",
	})
	require.Positive(t, sizes["plugin"], "the probe links the plugin: the symbol names are as read")
	for _, dep := range []string{"pgx", "pgstore", "prometheus", "protobuf"} {
		assert.Zero(t, sizes[dep], "%s is linked", dep)
	}
	// What stays is what package initialisation reaches (fleet's Lua
	// scripts, hashed at init; go-redis's own inits): 5.4 KB and 1.8 KB when
	// this test was written.
	assert.Less(t, sizes["go-redis"], 32<<10, "the Redis client is linked")
	assert.Less(t, sizes["fleet"], 8<<10, "the fleet's code is linked")
}

// linkedBytes sums, per name of want, the sizes of the symbols of `go tool
// nm -size` output whose name holds its substring.
func linkedBytes(t *testing.T, nm []byte, want map[string]string) map[string]int {
	t.Helper()
	sizes := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(nm))
	for sc.Scan() {
		f := strings.Fields(sc.Text()) // address size type name
		if len(f) < 4 {
			continue
		}
		size, err := strconv.Atoi(f[1])
		require.NoError(t, err, sc.Text())
		name := strings.Join(f[3:], " ")
		for k, sub := range want {
			if strings.Contains(name, sub) {
				sizes[k] += size
			}
		}
	}
	require.NoError(t, sc.Err())
	return sizes
}
