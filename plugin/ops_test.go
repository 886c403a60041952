package plugin_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topggprom"
	"github.com/dblkit/go-topgg/voterewards"
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

// The Prometheus collector is the plugin's Observer as it is.
var _ plugin.Observer = (*topggprom.Collector)(nil)

// gathered returns the value of a series of reg (name it name_count for a
// histogram's count), 0 if it has none.
func gathered(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	v, _ := testkit.MetricValue(testkit.MetricsText(t, reg), testkit.MetricSeries(name, labels))
	return v
}

// TestWithMetricsCountsEveryJob: with WithMetrics, the autopost attempts, the
// command sync, the webhook deliveries and the vote pipeline reach the
// collectors, next to the handlers given with WithOnPost, and the fleet's
// leader job's calls set the leader gauge.
func TestWithMetricsCountsEveryJob(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 2})
	reg := prometheus.NewPedanticRegistry()
	c, err := topggprom.New(reg)
	require.NoError(t, err)
	cfg := w.config()
	cfg.WebhookSecrets = plugin.WebhookSecrets{testSecret}
	cfg.WebhookAddr = "127.0.0.1:0"
	posts := make(chan autopost.Result, 64)
	failing := 0
	reward := func(_ context.Context, v voterewards.Vote) error {
		if v.PlatformID == votes(2)[1].PlatformID && failing < 1 {
			failing++
			return errors.New("once")
		}
		return nil
	}
	p := w.plugin(cfg, plugin.WithMetrics(c), plugin.WithRewardHandler(reward),
		plugin.WithOnPost(func(r autopost.Result) { posts <- r }))
	w.start(p)
	w.open()
	w.waitPolls(1)
	deliverToPlugin(t, w, p)
	for _, v := range votes(2) {
		w.tg.AddVote(v) // delivered by webhook, and seen again by the poll
	}

	labels := func(k, v string) map[string]string { return map[string]string{k: v} }
	require.Eventually(t, func() bool {
		return gathered(t, reg, "topgg_votes_rewarded_total", labels("source", "webhook"))+
			gathered(t, reg, "topgg_votes_rewarded_total", labels("source", "history")) == 2 &&
			gathered(t, reg, "topgg_webhook_requests_total", labels("outcome", "accepted")) == 2 &&
			gathered(t, reg, "topgg_autopost_posts_total", labels("outcome", "posted")) >= 1 &&
			gathered(t, reg, "topgg_commands_syncs_total", labels("outcome", "published")) == 1
	}, wait, tick)
	<-posts // WithOnPost still hears the posts
	ingested := 0.0
	for _, s := range []string{"webhook", "history"} {
		ingested += gathered(t, reg, "topgg_votes_ingested_total", labels("source", s))
	}
	assert.Equal(t, 2.0, ingested, "each vote stored once, by whichever source came first")
	require.Eventually(t, func() bool {
		return gathered(t, reg, "topgg_votes_duplicate_total", labels("source", "history"))+
			gathered(t, reg, "topgg_votes_duplicate_total", labels("source", "webhook")) >= 2
	}, wait, tick, "the second source's records are duplicates")
	assert.Equal(t, 1.0, gathered(t, reg, "topgg_vote_reward_retries_total", labels("source", "webhook"))+
		gathered(t, reg, "topgg_vote_reward_retries_total", labels("source", "history")))
	assert.Equal(t, 2.0, gathered(t, reg, "topgg_vote_reward_latency_seconds_count", labels("source", "webhook"))+
		gathered(t, reg, "topgg_vote_reward_latency_seconds_count", labels("source", "history")))
	assert.Equal(t, 0.0, gathered(t, reg, "topgg_votes_pending", nil))

	p.Leading(true)
	assert.Equal(t, 1.0, gathered(t, reg, "topgg_fleet_leader", nil))
	p.Leading(false)
	assert.Equal(t, 0.0, gathered(t, reg, "topgg_fleet_leader", nil))
	assert.Equal(t, 2.0, gathered(t, reg, "topgg_fleet_leadership_changes_total", nil))
}

// TestWithMetricsRefusesNil: a nil Observer, or a typed nil one, is an error.
func TestWithMetricsRefusesNil(t *testing.T) {
	t.Parallel()
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	for _, m := range []plugin.Observer{nil, (*topggprom.Collector)(nil)} {
		_, err := plugin.New(newClient(t, tg), plugin.Config{Autopost: "off"}, plugin.WithMetrics(m))
		assert.ErrorIs(t, err, topgg.ErrNilArgument)
	}
}

// panicky is an Observer whose every method panics.
type panicky struct{}

func (panicky) ObservePost(autopost.Result)        { panic("ObservePost bug") }
func (panicky) ObserveSync(commands.Result, error) { panic("ObserveSync bug") }
func (panicky) ObserveVote(voterewards.Event)      { panic("ObserveVote bug") }
func (panicky) ObserveWebhook(error)               { panic("ObserveWebhook bug") }
func (panicky) ObserveLease(fleet.LeaseState)      { panic("ObserveLease bug") }

// TestWithMetricsContainsPanics: an Observer that panics in every method
// breaks nothing: the posts reach WithOnPost, the commands are published and
// the votes rewarded, the leader's calls return, and the log names the hook.
func TestWithMetricsContainsPanics(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 2})
	var log logBuffer
	posts := make(chan autopost.Result, 64)
	rewarded := make(chan string, 8)
	p := w.plugin(w.config(), plugin.WithMetrics(panicky{}), plugin.WithLogger(log.Logger()),
		plugin.WithOnPost(func(r autopost.Result) { posts <- r }),
		plugin.WithRewardHandler(func(_ context.Context, v voterewards.Vote) error { rewarded <- v.PlatformID; return nil }))
	w.start(p)
	w.open()
	w.tg.AddVote(votes(1)[0])
	select {
	case <-posts:
	case <-time.After(wait):
		t.Fatal("no post reached WithOnPost")
	}
	select {
	case id := <-rewarded:
		assert.Equal(t, votes(1)[0].PlatformID, id)
	case <-time.After(wait):
		t.Fatal("no vote rewarded")
	}
	require.NotPanics(t, func() { p.Leading(true); p.Leading(false) })
	require.Eventually(t, func() bool {
		s := log.String()
		return strings.Contains(s, "ObservePost bug") && strings.Contains(s, "ObserveVote bug") &&
			strings.Contains(s, "ObserveLease bug") && strings.Contains(s, "ObserveSync bug")
	}, wait, tick, "log: %s", log.String())
}
