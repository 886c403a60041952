package plugin_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// probe serves the plugin's checks as /livez and /readyz, over HTTP.
type probe struct {
	t   *testing.T
	srv *httptest.Server
}

func newProbe(t *testing.T, p *plugin.Plugin) *probe {
	t.Helper()
	live, err := health.NewProbe("livez", p.LivenessChecks()...)
	require.NoError(t, err)
	ready, err := health.NewProbe("readyz", p.ReadinessChecks()...)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("GET /livez", live)
	mux.Handle("GET /readyz", ready)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &probe{t: t, srv: srv}
}

// get returns the status and the verbose body of a probe.
func (pr *probe) get(path string) (int, string) {
	resp, err := pr.srv.Client().Get(pr.srv.URL + path + "?verbose")
	if !assert.NoError(pr.t, err) {
		return 0, ""
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	assert.NoError(pr.t, err)
	return resp.StatusCode, string(body)
}

// TestReadinessFollowsShardsAndToken: /readyz is 503 before Run and before
// the shards have their READY, 200 once they have, and 503 again once Top.gg
// refuses the token; /livez is 200 throughout.
func TestReadinessFollowsShardsAndToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{shards: 2, perShard: 2})
	cfg := w.config()
	cfg.SyncCommands = new(false)
	var logs logBuffer
	client, err := topgg.New(w.tg.Token(), topgg.WithBaseURL(w.tg.URL), topgg.WithLogger(logs.Logger()),
		topgg.WithRetryPolicy(topgg.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}))
	require.NoError(t, err)
	w.client = client
	p := w.plugin(cfg, plugin.WithLogger(logs.Logger()))
	pr := newProbe(t, p)
	requireLive := func() {
		t.Helper()
		code, body := pr.get("/livez")
		require.Equal(t, http.StatusOK, code, body)
	}

	code, body := pr.get("/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "[-]running failed: the plugin is not running")
	requireLive()

	w.start(p)
	require.Eventually(t, func() bool { _, b := pr.get("/readyz"); return strings.Contains(b, "[+]running ok") }, wait, tick)
	code, body = pr.get("/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "[-]shards failed: shards without READY: [0 1]")
	require.Contains(t, body, "[+]token ok")
	require.Contains(t, body, "[+]state ok")
	requireLive()

	w.open(0)
	require.Eventually(t, func() bool { _, b := pr.get("/readyz"); return strings.Contains(b, "shards without READY: [1]") }, wait, tick)
	requireLive()
	w.open(1)
	require.Eventually(t, func() bool { c, _ := pr.get("/readyz"); return c == http.StatusOK }, wait, tick)
	requireLive()

	require.NoError(t, w.tg.Inject(topggtest.Fault{Path: "/v1/*", Status: http.StatusUnauthorized, Times: 1 << 20}))
	require.Eventually(t, func() bool { c, _ := pr.get("/readyz"); return c == http.StatusServiceUnavailable }, wait, tick)
	_, body = pr.get("/readyz")
	require.Contains(t, body, "[-]token failed: Top.gg refused the token (401)")
	require.Contains(t, body, "[+]shards ok")
	requireLive()
	w.waitPolls(3) // the jobs go on
	requireLive()
	// Refused again and again, the token is logged once at error level, with
	// what to check.
	assert.Equal(t, 1, strings.Count(logs.String(), "Top.gg refused the token"), logs.String())
	assert.Contains(t, logs.String(), "check=")
}

// TestLivenessFailsWhenRunFailed: a refused token that ends Run (command
// sync returns it) fails /livez.
func TestLivenessFailsWhenRunFailed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	require.NoError(t, w.tg.Inject(topggtest.Fault{Path: "/v1/*", Status: http.StatusUnauthorized, Times: 1 << 20}))
	cfg := w.config()
	cfg.VotePollInterval = new(time.Duration(0))
	p := w.plugin(cfg, plugin.WithCommands([]*discordgo.ApplicationCommand{}))
	pr := newProbe(t, p)
	code, _ := pr.get("/livez")
	require.Equal(t, http.StatusOK, code)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	w.open()
	require.ErrorIs(t, <-done, plugin.ErrJobFailed)
	code, body := pr.get("/livez")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "[-]jobs failed: the plugin stopped")
}

// TestReadinessChecksTheState: with a state, "state" passes while the state
// takes a write and fails once it cannot (here closed); one process has no
// "leadership".
func TestReadinessChecksTheState(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	st, err := boltstate.Open(t.TempDir())
	require.NoError(t, err)
	p := w.plugin(w.config(), plugin.WithState(st))
	var names []string
	var check func(context.Context) error
	for _, c := range p.ReadinessChecks() {
		names = append(names, c.Name)
		if c.Name == "state" {
			check = c.Func
		}
	}
	assert.Equal(t, []string{"running", "shards", "token", "state"}, names)
	require.NotNil(t, check)
	require.NoError(t, check(w.ctx()))
	require.NoError(t, st.Close())
	assert.Error(t, check(w.ctx()), "a closed state takes no write")
}
