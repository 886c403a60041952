package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// opsURL waits for the bot's "metrics server listening" record and returns
// the base URL it logged (METRICS_ADDR=127.0.0.1:0 picks a free port).
func (p *proc) opsURL() string {
	p.t.Helper()
	p.waitMsg("metrics server listening")
	for _, rec := range p.records() {
		if rec["msg"] == "metrics server listening" {
			addr, ok := rec["addr"].(string)
			require.True(p.t, ok, "no addr in %v", rec)
			return "http://" + addr
		}
	}
	p.t.Fatal("unreachable")
	return ""
}

// get fetches url with a bounded client and returns the status and body.
func get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// scrapeBot fetches /metrics from the running bot, checks that Prometheus'
// own text parser takes it, and returns the text.
func scrapeBot(t *testing.T, base string) string {
	t.Helper()
	status, body := get(t, base+"/metrics", "Accept", "text/plain; version=0.0.4")
	require.Equal(t, http.StatusOK, status, body)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	_, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	return body
}

// series returns the value of the series of name with exactly the given
// labels (a histogram's sample count), and whether text has it.
func series(text, name string, labels map[string]string) (float64, bool) {
	if v, ok := testkit.MetricValue(text, testkit.MetricSeries(name, labels)); ok {
		return v, true
	}
	return testkit.MetricValue(text, testkit.MetricSeries(name+"_count", labels))
}

// boundedLabels are the values each label of a topgg_ family may take.
var boundedLabels = map[string]*regexp.Regexp{
	"route":   regexp.MustCompile(`^(/v1/projects/@me[a-z/:_]*|/bots[a-z/:_]*|unknown)$`),
	"method":  regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE|other)$`),
	"code":    regexp.MustCompile(`^(200|201|204|400|401|403|404|408|413|429|500|502|503|504|none|other)$`),
	"le":      regexp.MustCompile(`^([0-9.e+]+|\+Inf)$`), // a histogram's bucket bounds
	"outcome": regexp.MustCompile(`^[a-z_]{2,20}$`),
	"source":  regexp.MustCompile(`^(history|webhook|webhook-v0|other)$`),
	"api":     regexp.MustCompile(`^(v1|v0)$`),
}

// TestE2EMetricsScrape scrapes /metrics from the running bot (the built
// binary, against the fake Discord and Top.gg): the server count posted, a
// 429 counted and retried, the votes rewarded with their latency, the
// commands published; every label value from a fixed set, and no user id
// anywhere in the answer.
func TestE2EMetricsScrape(t *testing.T) {
	e := newE2E(t)
	// The first post is answered 429 with a second's Retry-After.
	require.NoError(t, e.tg.Inject(topggtest.Fault{Method: http.MethodPatch, Path: metricsPath, RetryAfter: time.Millisecond}))
	votes := makeVotes(3)
	e.tg.AddVote(votes...)
	e.env["METRICS_ADDR"] = "127.0.0.1:0"
	bot := e.startBot()
	base := bot.opsURL()
	e.waitServers(3)
	require.Eventually(t, func() bool { return bot.countMsg("vote rewarded: role given") == len(votes) }, wait, tick)
	e.requireCommandsMatch()

	want := []struct {
		name   string
		labels map[string]string
		value  float64
	}{
		{"topgg_api_requests_total", map[string]string{"route": "/v1/projects/@me/metrics", "method": "PATCH", "code": "429", "outcome": "rate_limited"}, 1},
		{"topgg_api_requests_total", map[string]string{"route": "/v1/projects/@me/metrics", "method": "PATCH", "code": "204", "outcome": "ok"}, 1},
		{"topgg_api_retries_total", map[string]string{"route": "/v1/projects/@me/metrics"}, 1},
		{"topgg_autopost_posts_total", map[string]string{"outcome": "posted"}, 1},
		{"topgg_autopost_servers", nil, 3},
		{"topgg_autopost_shards", nil, e2eShards},
		{"topgg_commands_syncs_total", map[string]string{"outcome": "published"}, 1},
		{"topgg_votes_ingested_total", map[string]string{"source": "history"}, 3},
		{"topgg_votes_rewarded_total", map[string]string{"source": "history"}, 3},
		{"topgg_vote_reward_latency_seconds", map[string]string{"source": "history"}, 3},
		{"topgg_votes_pending", nil, 0},
		{"topgg_api_token_refused", map[string]string{"api": "v1"}, 0},
	}
	var text string
	// The counters are updated right after the log records the test waited
	// on: wait for the scrape to show them.
	require.Eventually(t, func() bool {
		text = scrapeBot(t, base)
		for _, w := range want {
			if v, ok := series(text, w.name, w.labels); !ok || v != w.value {
				return false
			}
		}
		return true
	}, wait, 50*time.Millisecond, "last scrape:\n%s", text)

	// The latencies: votes made 30 minutes ago, rewarded now.
	sum, ok := testkit.MetricValue(text, `topgg_vote_reward_latency_seconds_sum{source="history"}`)
	require.True(t, ok)
	assert.Greater(t, sum, 3*29*60.0)
	assert.Less(t, sum, 3*60*60.0)
	// The Go and process collectors are there too.
	_, ok = testkit.MetricValue(text, "go_goroutines")
	assert.True(t, ok, "go_goroutines")
	_, ok = testkit.MetricValue(text, "process_start_time_seconds")
	assert.True(t, ok, "process_start_time_seconds")

	for name, labels := range testkit.MetricLabels(text) {
		if !strings.HasPrefix(name, "topgg_") {
			continue
		}
		for k, v := range labels {
			re, ok := boundedLabels[k]
			require.True(t, ok, "%s: unexpected label %s", name, k)
			assert.Regexp(t, re, v, "%s{%s}", name, k)
		}
	}
	for _, v := range votes {
		assert.NotContains(t, text, v.PlatformID)
		assert.NotContains(t, text, v.UserID)
	}
	assert.NotContains(t, text, e.dc.BotUserID())
	bot.terminate()
}

// TestE2EProbes: /readyz is 503 while the shards wait for their READY, 200
// once they are ready, and 503 again while Top.gg refuses the token (which
// the bot logs once at error level, with what to check, however many polls
// fail); /livez is 200 throughout: a refused token is no reason to restart.
func TestE2EProbes(t *testing.T) {
	e := newE2E(t)
	// Discord makes the shards wait two seconds for the gateway's address.
	require.NoError(t, e.dc.Inject(discordtest.Fault{Path: "/gateway", RetryAfter: 2 * time.Second}))
	e.env["METRICS_ADDR"] = "127.0.0.1:0"
	bot := e.startBot()
	base := bot.opsURL()
	live := func() {
		t.Helper()
		status, body := get(t, base+"/livez?verbose")
		require.Equal(t, http.StatusOK, status, body)
	}
	ready := func() (int, string) { return get(t, base+"/readyz?verbose") }

	status, body := ready()
	assert.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Contains(t, body, "[-]shards failed")
	live()

	require.Eventually(t, func() bool { s, _ := ready(); return s == http.StatusOK }, wait, 20*time.Millisecond)
	live()
	bot.waitMsg("bot is online")

	// Top.gg refuses the token on every vote poll from now on.
	require.NoError(t, e.tg.Inject(topggtest.Fault{Path: votesPath, Status: http.StatusUnauthorized, Times: 1_000_000}))
	require.Eventually(t, func() bool { s, _ := ready(); return s == http.StatusServiceUnavailable }, wait, 20*time.Millisecond)
	status, body = ready()
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Contains(t, body, "[-]token failed: Top.gg refused the token (401)")
	assert.NotContains(t, body, e2eTopggToken)
	live()
	e.waitPolls(5)
	live()
	status, _ = ready()
	assert.Equal(t, http.StatusServiceUnavailable, status)

	refusals := 0
	for _, rec := range bot.records() {
		msg, _ := rec["msg"].(string)
		if rec["level"] == "ERROR" {
			assert.NotContains(t, msg, "poll failed", "each failed poll is no error of its own")
		}
		if strings.Contains(msg, "refused the token") && rec["level"] == "ERROR" {
			refusals++
			assert.Contains(t, rec, "check", "the record says what to check")
		}
	}
	assert.Equal(t, 1, refusals, "the refused token is logged once at error level")
	bot.terminate()
}
