package topggprom_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topggprom"
)

// staticSource gives the Poster complete counts, without Discord.
type staticSource struct{ c autopost.Counts }

func (s staticSource) Counts(context.Context) (autopost.Counts, error) { return s.c, nil }
func (s staticSource) Changed() <-chan struct{}                        { return nil }

// scrape fetches /metrics over HTTP and parses it with Prometheus' own
// text parser.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// value returns the value of the series of family name with exactly the
// given labels (a counter's, a gauge's, or a histogram's sample count).
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	require.True(t, ok, "no family %s", name)
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		if len(got) != len(labels) {
			continue
		}
		match := true
		for k, v := range labels {
			match = match && got[k] == v
		}
		if !match {
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
	t.Fatalf("no series %s%v; have %v", name, labels, f.GetMetric())
	return 0
}

// allowed are the label values each label may take.
var allowed = map[string]*regexp.Regexp{
	"route":   regexp.MustCompile(`^(project|announcements|metrics|metrics_batch|commands|votes|vote_status|legacy_bots|legacy_stats|legacy_check|legacy_voters|unknown)$`),
	"method":  regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE|other)$`),
	"code":    regexp.MustCompile(`^([1-5][0-9][0-9]|none|other)$`),
	"outcome": regexp.MustCompile(`^[a-z_]+$`),
	"source":  regexp.MustCompile(`^(history|webhook|webhook-v0|other)$`),
	"api":     regexp.MustCompile(`^(v1|v0)$`),
}

// requireBounded checks every label of every topgg_ family against its set.
func requireBounded(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	for name, f := range fams {
		if len(name) < 6 || name[:6] != "topgg_" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				re, ok := allowed[lp.GetName()]
				require.True(t, ok, "%s: unexpected label %s", name, lp.GetName())
				require.Regexp(t, re, lp.GetValue(), "%s{%s}", name, lp.GetName())
			}
		}
	}
}

func TestScrapeCountsPostsAnd429(t *testing.T) {
	t.Parallel()
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	reg := prometheus.NewRegistry()
	m, err := topggprom.New(reg)
	require.NoError(t, err)
	retry := topgg.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, MaxRetryAfter: 5 * time.Second}
	client, err := topgg.New(tg.Token(), topgg.WithBaseURL(tg.URL), topgg.WithRetryPolicy(retry), topgg.WithObserver(m.ObserveRequest))
	require.NoError(t, err)

	// The first PATCH is refused with a 429; the client waits and retries.
	require.NoError(t, tg.Inject(topggtest.Fault{Method: "PATCH", Path: "/v1/projects/@me/metrics", RetryAfter: time.Millisecond}))
	var mu sync.Mutex
	var results []autopost.Result
	poster, err := autopost.New(client, autopost.Config{
		Interval: time.Hour,
		Source:   staticSource{autopost.Counts{Servers: 42, Shards: 2, PerShard: []int{20, 22}}},
		OnPost: func(r autopost.Result) {
			m.AutopostAttempt(r.Outcome(), r.Servers, r.Shards, r.Backfilled)
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- poster.Run(ctx) }()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(results) == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	require.NoError(t, <-done)

	m.CommandSync(commands.Outcome(commands.Result{Commands: 1}, nil))
	m.VoteRewarded("webhook", 3*time.Second)
	m.VoteRewarded("800506814562787328", time.Minute) // not a source: counted as other
	m.WebhookRequest("/etc/passwd")
	m.FleetLeader(true)

	fams := scrape(t, reg)
	assert.Equal(t, 1.0, value(t, fams, "topgg_api_requests_total",
		map[string]string{"route": "metrics", "method": "PATCH", "code": "429", "outcome": "rate_limited"}))
	assert.Equal(t, 1.0, value(t, fams, "topgg_api_requests_total",
		map[string]string{"route": "metrics", "method": "PATCH", "code": "204", "outcome": "ok"}))
	assert.Equal(t, 1.0, value(t, fams, "topgg_api_retries_total", map[string]string{"route": "metrics"}))
	assert.Equal(t, 2.0, value(t, fams, "topgg_api_request_duration_seconds", map[string]string{"route": "metrics"}))
	assert.Equal(t, 0.0, value(t, fams, "topgg_api_token_refused", map[string]string{"api": "v1"}))
	assert.Equal(t, 1.0, value(t, fams, "topgg_autopost_posts_total", map[string]string{"outcome": "posted"}))
	assert.Equal(t, 0.0, value(t, fams, "topgg_autopost_posts_total", map[string]string{"outcome": "failed"}))
	assert.Equal(t, 42.0, value(t, fams, "topgg_autopost_servers", nil))
	assert.Equal(t, 2.0, value(t, fams, "topgg_autopost_shards", nil))
	assert.Positive(t, value(t, fams, "topgg_autopost_last_post_timestamp_seconds", nil))
	assert.Equal(t, 1.0, value(t, fams, "topgg_commands_syncs_total", map[string]string{"outcome": "published"}))
	assert.Equal(t, 1.0, value(t, fams, "topgg_votes_rewarded_total", map[string]string{"source": "webhook"}))
	assert.Equal(t, 1.0, value(t, fams, "topgg_votes_rewarded_total", map[string]string{"source": "other"}))
	assert.Equal(t, 1.0, value(t, fams, "topgg_vote_reward_latency_seconds", map[string]string{"source": "webhook"}))
	assert.Equal(t, 1.0, value(t, fams, "topgg_webhook_requests_total", map[string]string{"outcome": "other"}))
	assert.Equal(t, 1.0, value(t, fams, "topgg_fleet_leader", nil))
	assert.Equal(t, 1.0, value(t, fams, "topgg_fleet_leadership_changes_total", nil))
	requireBounded(t, fams)
}

// TestScrapeTokenRefused: a 401 sets topgg_api_token_refused until a success.
func TestScrapeTokenRefused(t *testing.T) {
	t.Parallel()
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	reg := prometheus.NewRegistry()
	m, err := topggprom.New(reg)
	require.NoError(t, err)
	client, err := topgg.New(tg.Token(), topgg.WithBaseURL(tg.URL), topgg.WithObserver(m.ObserveRequest))
	require.NoError(t, err)
	require.NoError(t, tg.Inject(topggtest.Fault{Path: "/v1/*", Status: http.StatusUnauthorized}))
	_, err = client.Project(context.Background())
	require.ErrorIs(t, err, topgg.ErrUnauthorized)
	fams := scrape(t, reg)
	assert.Equal(t, 1.0, value(t, fams, "topgg_api_token_refused", map[string]string{"api": "v1"}))
	assert.Equal(t, 1.0, value(t, fams, "topgg_api_requests_total",
		map[string]string{"route": "project", "method": "GET", "code": "401", "outcome": "api_error"}))
	_, err = client.Project(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0.0, value(t, scrape(t, reg), "topgg_api_token_refused", map[string]string{"api": "v1"}))
	requireBounded(t, fams)
}

func TestNewRefusesNilAndDuplicates(t *testing.T) {
	t.Parallel()
	_, err := topggprom.New(nil)
	require.Error(t, err)
	reg := prometheus.NewRegistry()
	_, err = topggprom.New(reg)
	require.NoError(t, err)
	_, err = topggprom.New(reg)
	require.Error(t, err)
}
