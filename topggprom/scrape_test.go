package topggprom_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topggprom"
	"github.com/dblkit/go-topgg/voterewards"
)

// staticSource gives the Poster complete counts, without Discord.
type staticSource struct{ c autopost.Counts }

func (s staticSource) Counts(context.Context) (autopost.Counts, error) { return s.c, nil }
func (s staticSource) Changed() <-chan struct{}                        { return nil }

// allowed are the label values each label may take.
var allowed = map[string]*regexp.Regexp{
	"route":   routeLabels(),
	"method":  regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE|other)$`),
	"code":    regexp.MustCompile(`^(200|201|204|400|401|403|404|408|413|429|500|502|503|504|none|other)$`),
	"outcome": regexp.MustCompile(`^[a-z_]+$`),
	"source":  regexp.MustCompile(`^(history|webhook|webhook-v0|other)$`),
	"api":     regexp.MustCompile(`^(v1|v0)$`),
	"le":      regexp.MustCompile(`^[0-9.e+]+|\+Inf$`),
}

// routeLabels matches the path of each of the client's routes, and "unknown".
func routeLabels() *regexp.Regexp {
	paths := []string{"unknown"}
	for _, pattern := range topgg.Routes() {
		_, p, _ := strings.Cut(pattern, " ")
		paths = append(paths, regexp.QuoteMeta(p))
	}
	return regexp.MustCompile(`^(` + strings.Join(paths, "|") + `)$`)
}

// requireBounded checks every label of every topgg_ series against its set.
func requireBounded(t *testing.T, text string) {
	t.Helper()
	for name, labels := range testkit.MetricLabels(text) {
		for k, v := range labels {
			re, ok := allowed[k]
			require.True(t, ok, "%s: unexpected label %s", name, k)
			require.Regexp(t, re, v, "%s{%s}", name, k)
		}
	}
}

// requireValue checks the value of one series of text.
func requireValue(t *testing.T, text string, want float64, name string, labels map[string]string) {
	t.Helper()
	series := testkit.MetricSeries(name, labels)
	got, ok := testkit.MetricValue(text, series)
	require.True(t, ok, "no series %s in:\n%s", series, text)
	assert.Equal(t, want, got, series)
}

func lbl(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// observed returns a fake Top.gg, a collector and a client whose requests
// it observes, sent to base (the fake when empty) with the fake's token.
func observed(t *testing.T, base string, opts ...topgg.Option) (*topggtest.Server, *topggprom.Collector, *prometheus.Registry, *topgg.Client) {
	t.Helper()
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	c, reg := collector(t)
	if base == "" {
		base = tg.URL
	}
	client, err := topgg.New(tg.Token(), append([]topgg.Option{topgg.WithBaseURL(base), topgg.WithObserver(c.ObserveRequest)}, opts...)...)
	require.NoError(t, err)
	return tg, c, reg, client
}

func TestScrapeCountsPostsAnd429(t *testing.T) {
	t.Parallel()
	retry := topgg.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, MaxRetryAfter: 5 * time.Second}
	tg, c, reg, client := observed(t, "", topgg.WithRetryPolicy(retry))

	// The first PATCH is refused with a 429; the client waits and retries.
	require.NoError(t, tg.Inject(topggtest.Fault{Method: "PATCH", Path: "/v1/projects/@me/metrics", RetryAfter: time.Millisecond}))
	var mu sync.Mutex
	var results []autopost.Result
	poster, err := autopost.New(client, autopost.Config{
		Interval: time.Hour,
		Source:   staticSource{autopost.Counts{Servers: 42, Shards: 2, PerShard: []int{20, 22}}},
		OnPost: func(r autopost.Result) {
			c.ObservePost(r)
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
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)

	c.ObserveSync(commands.Result{Outcome: commands.OutcomePublished, Commands: 1}, nil)
	c.ObserveVote(voterewards.Event{Type: voterewards.EventDelivered, Origin: voterewards.OriginWebhook, Latency: 3 * time.Second})
	c.ObserveVote(voterewards.Event{Type: voterewards.EventDelivered, Origin: 200, Latency: time.Minute}) // not a source: counted as other
	c.ObserveWebhook(errors.New("store down"))
	c.ObserveLease(fleet.LeaseState{Leader: true})

	text := testkit.MetricsText(t, reg)
	requireValue(t, text, 1, "topgg_api_requests_total", lbl("route", "/v1/projects/@me/metrics", "method", "PATCH", "code", "429", "outcome", "rate_limited"))
	requireValue(t, text, 1, "topgg_api_requests_total", lbl("route", "/v1/projects/@me/metrics", "method", "PATCH", "code", "204", "outcome", "ok"))
	requireValue(t, text, 1, "topgg_api_retries_total", lbl("route", "/v1/projects/@me/metrics"))
	requireValue(t, text, 2, "topgg_api_request_duration_seconds_count", lbl("route", "/v1/projects/@me/metrics"))
	requireValue(t, text, 0, "topgg_api_token_refused", lbl("api", "v1"))
	requireValue(t, text, 1, "topgg_autopost_posts_total", lbl("outcome", "posted"))
	requireValue(t, text, 0, "topgg_autopost_posts_total", lbl("outcome", "failed"))
	requireValue(t, text, 42, "topgg_autopost_servers", nil)
	requireValue(t, text, 2, "topgg_autopost_shards", nil)
	last, ok := testkit.MetricValue(text, "topgg_autopost_last_post_timestamp_seconds")
	require.True(t, ok)
	assert.Positive(t, last)
	requireValue(t, text, 1, "topgg_commands_syncs_total", lbl("outcome", "published"))
	requireValue(t, text, 1, "topgg_votes_rewarded_total", lbl("source", "webhook"))
	requireValue(t, text, 1, "topgg_votes_rewarded_total", lbl("source", "other"))
	requireValue(t, text, 1, "topgg_vote_reward_latency_seconds_count", lbl("source", "webhook"))
	requireValue(t, text, 1, "topgg_webhook_requests_total", lbl("outcome", "store_failed"))
	requireValue(t, text, 0, "topgg_webhook_requests_total", lbl("outcome", "accepted"))
	requireValue(t, text, 1, "topgg_fleet_leader", nil)
	requireValue(t, text, 1, "topgg_fleet_leadership_changes_total", nil)
	requireBounded(t, text)
}

// TestScrapeTokenRefused: a 401 sets topgg_api_token_refused until a success.
func TestScrapeTokenRefused(t *testing.T) {
	t.Parallel()
	tg, _, reg, client := observed(t, "")
	require.NoError(t, tg.Inject(topggtest.Fault{Path: "/v1/*", Status: http.StatusUnauthorized}))
	_, err := client.Project(context.Background())
	require.ErrorIs(t, err, topgg.ErrUnauthorized)
	text := testkit.MetricsText(t, reg)
	requireValue(t, text, 1, "topgg_api_token_refused", lbl("api", "v1"))
	requireValue(t, text, 1, "topgg_api_requests_total", lbl("route", "/v1/projects/@me", "method", "GET", "code", "401", "outcome", "api_error"))
	_, err = client.Project(context.Background())
	require.NoError(t, err)
	requireValue(t, testkit.MetricsText(t, reg, "topgg_api_token_refused"), 0, "topgg_api_token_refused", lbl("api", "v1"))
	requireBounded(t, text)
}

// TestOddStatusCodesDoNotGrowSeries: an upstream answering every status code
// from 200 to 599 adds at most one series per documented code (and one for
// all the others) to the request counter, and a second round adds none.
func TestOddStatusCodesDoNotGrowSeries(t *testing.T) {
	t.Parallel()
	project, err := json.Marshal(topggtest.DiscordBot())
	require.NoError(t, err)
	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write(project)
	}))
	t.Cleanup(srv.Close)
	_, _, reg, client := observed(t, srv.URL, topgg.WithRetryPolicy(topgg.RetryPolicy{MaxAttempts: 1}))

	round := func() int {
		for code := 200; code <= 599; code++ {
			status.Store(int32(code))
			_, _ = client.Project(context.Background())
		}
		n, err := testutil.GatherAndCount(reg, "topgg_api_requests_total")
		require.NoError(t, err)
		return n
	}
	first := round()
	// 14 documented codes and "other", each under a few outcomes at most.
	assert.LessOrEqual(t, first, 2*16, "series after 400 status codes")
	assert.Equal(t, first, round(), "a second round adds no series")
	requireBounded(t, testkit.MetricsText(t, reg))
}

// Any status, method, route or error, however odd, lands in a bounded set.
func TestRequestLabelsAreBounded(t *testing.T) {
	t.Parallel()
	c, reg := collector(t)
	errs := []error{nil, errors.New("odd"), &topgg.APIError{}, &topgg.RateLimitError{Local: true}, &topgg.DecodeError{}}
	for status := -1; status < 1000; status++ {
		route := fmt.Sprintf("BREW /bots/%d/stats", status) // an id: unknown
		if status%2 == 0 {
			route = "GET /v1/projects/@me/votes/:user_id"
		}
		c.ObserveRequest(topgg.Request{Route: route, Status: status, Err: errs[(status+1)%len(errs)]})
	}
	// 2 routes x 1 method x 16 codes x 5 outcomes at most; the codes alone: 16.
	n, err := testutil.GatherAndCount(reg, "topgg_api_requests_total")
	require.NoError(t, err)
	assert.LessOrEqual(t, n, 2*16*5)
	codes := map[string]bool{}
	for _, labels := range testkit.MetricLabels(testkit.MetricsText(t, reg, "topgg_api_requests_total")) {
		codes[labels["code"]] = true
	}
	assert.Len(t, codes, 16)
	requireBounded(t, testkit.MetricsText(t, reg))
}

// The route label is the path of one of the client's routes, whatever a
// caller passes: every route the client calls has its own, anything else is
// "unknown", even shaped like a route.
func TestRequestRouteLabelIsAClientRoute(t *testing.T) {
	t.Parallel()
	c, reg := collector(t)
	for _, pattern := range topgg.Routes() {
		c.ObserveRequest(topgg.Request{Route: pattern, Attempt: 1, Status: http.StatusOK})
	}
	for i := range 100 {
		c.ObserveRequest(topgg.Request{Route: fmt.Sprintf("GET /v1/projects/@me/x%c", 'a'+i%26), Status: http.StatusOK})
		c.ObserveRequest(topgg.Request{Route: "GET /bots/:bot_id/" + strings.Repeat("a", i+1), Status: http.StatusOK})
	}
	text := testkit.MetricsText(t, reg, "topgg_api_requests_total")
	for _, pattern := range topgg.Routes() {
		method, path, _ := strings.Cut(pattern, " ")
		requireValue(t, text, 1, "topgg_api_requests_total", lbl("route", path, "method", method, "code", "200", "outcome", "ok"))
	}
	requireValue(t, text, 200, "topgg_api_requests_total", lbl("route", "unknown", "method", "GET", "code", "200", "outcome", "ok"))
	n, err := testutil.GatherAndCount(reg, "topgg_api_requests_total")
	require.NoError(t, err)
	require.Equal(t, len(topgg.Routes())+1, n)
	requireBounded(t, testkit.MetricsText(t, reg))
}

// A refusal on a v0 route counts under api="v0" even when the route is not
// one of the client's (its label is "unknown").
func TestTokenRefusedOnAnUnknownV0Route(t *testing.T) {
	t.Parallel()
	c, reg := collector(t)
	refused := &topgg.APIError{StatusCode: http.StatusUnauthorized}
	c.ObserveRequest(topgg.Request{Route: "GET /bots/264811613708746752/stats", Status: http.StatusUnauthorized, Err: refused})
	text := testkit.MetricsText(t, reg)
	requireValue(t, text, 1, "topgg_api_requests_total", lbl("route", "unknown", "method", "GET", "code", "401", "outcome", "api_error"))
	requireValue(t, text, 1, "topgg_api_token_refused", lbl("api", "v0"))
	requireValue(t, text, 0, "topgg_api_token_refused", lbl("api", "v1"))
	c.ObserveRequest(topgg.Request{Route: "GET /bots", Status: http.StatusOK})
	requireValue(t, testkit.MetricsText(t, reg), 0, "topgg_api_token_refused", lbl("api", "v0"))
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

// A typed nil registry is refused with an error, not a panic in Register.
func TestNewRefusesATypedNilRegistry(t *testing.T) {
	t.Parallel()
	var reg *prometheus.Registry
	var c *topggprom.Collector
	var err error
	require.NotPanics(t, func() { c, err = topggprom.New(reg) })
	assert.Error(t, err)
	assert.Nil(t, c)
}

// collector returns a Collector on a new pedantic registry.
func collector(t *testing.T) (*topggprom.Collector, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	c, err := topggprom.New(reg)
	require.NoError(t, err)
	return c, reg
}
