package plugin_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topggprom"
	"github.com/dblkit/go-topgg/voterewards"
)

// The Prometheus collectors are the plugin's Metrics as they are.
var _ plugin.Metrics = (*topggprom.Metrics)(nil)

// gathered returns the value of a series of reg (a histogram's count), 0 if
// it has none.
func gathered(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, labels map[string]string) bool {
	if len(m.GetLabel()) != len(labels) {
		return false
	}
	for _, lp := range m.GetLabel() {
		if labels[lp.GetName()] != lp.GetValue() {
			return false
		}
	}
	return true
}

// TestWithMetricsCountsEveryJob: with WithMetrics, the autopost attempts, the
// command sync, the webhook deliveries and the vote pipeline reach the
// collectors, next to the handlers given with WithOnPost, and the fleet's
// leader job's calls set the leader gauge.
func TestWithMetricsCountsEveryJob(t *testing.T) {
	t.Parallel()
	ht := newHookTarget(t)
	w := newWorld(t, worldSpec{perShard: 2, tgOpts: []topggtest.Option{topggtest.WithWebhook(ht.srv.URL+"/hook", testSecret)}})
	reg := prometheus.NewRegistry()
	m, err := topggprom.New(reg)
	require.NoError(t, err)
	cfg := w.config()
	cfg.WebhookSecrets = plugin.WebhookSecrets{testSecret}
	posts := make(chan autopost.Result, 64)
	failing := 0
	reward := func(_ context.Context, v voterewards.Vote) error {
		if v.PlatformID == votes(2)[1].PlatformID && failing < 1 {
			failing++
			return errors.New("once")
		}
		return nil
	}
	p := w.plugin(cfg, plugin.WithMetrics(m), plugin.WithRewardHandler(reward),
		plugin.WithOnPost(func(r autopost.Result) { posts <- r }))
	ht.set(t, p)
	w.start(p)
	w.open()
	w.waitPolls(1)
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
	assert.Equal(t, 2.0, gathered(t, reg, "topgg_vote_reward_latency_seconds", labels("source", "webhook"))+
		gathered(t, reg, "topgg_vote_reward_latency_seconds", labels("source", "history")))
	assert.Equal(t, 0.0, gathered(t, reg, "topgg_votes_pending", nil))

	p.Leading(true)
	assert.Equal(t, 1.0, gathered(t, reg, "topgg_fleet_leader", nil))
	p.Leading(false)
	assert.Equal(t, 0.0, gathered(t, reg, "topgg_fleet_leader", nil))
	assert.Equal(t, 2.0, gathered(t, reg, "topgg_fleet_leadership_changes_total", nil))
}

// TestWithMetricsRefusesNil: a nil Metrics, or a typed nil one, is an error.
func TestWithMetricsRefusesNil(t *testing.T) {
	t.Parallel()
	tg := topggtest.NewServer()
	t.Cleanup(tg.Close)
	for _, m := range []plugin.Metrics{nil, (*topggprom.Metrics)(nil)} {
		_, err := plugin.New(newClient(t, tg), plugin.Config{Autopost: plugin.AutopostOff}, plugin.WithMetrics(m))
		assert.ErrorIs(t, err, topgg.ErrNilArgument)
	}
}

// TestChecksOfNilPlugin: the checks of a nil *Plugin fail; asking for them
// does not panic.
func TestChecksOfNilPlugin(t *testing.T) {
	t.Parallel()
	var p *plugin.Plugin
	for _, c := range append(p.LivenessChecks(), p.ReadinessChecks()...) {
		assert.Error(t, c.Func(context.Background()), c.Name)
	}
}
