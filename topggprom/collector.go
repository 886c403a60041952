package topggprom

import (
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/voterewards"
)

const namespace = "topgg"

// Collector holds go-topgg's jobs' metrics, registered by [New]; its
// Observe methods are the jobs' hooks, safe for concurrent use.
type Collector struct {
	all []prometheus.Collector

	routes    map[string]string // route label values by pattern; read-only
	requests  *prometheus.CounterVec
	durations *prometheus.HistogramVec
	retries   *prometheus.CounterVec
	refused   [2]prometheus.Gauge // v1, v0

	posts      []prometheus.Counter // by autopost.Outcome; [0] "other"
	servers    prometheus.Gauge
	shards     prometheus.Gauge
	backfilled prometheus.Counter
	lastPost   prometheus.Gauge
	syncs      []prometheus.Counter // by commands.Outcome

	// by voterewards.Origin; [0] "other"
	ingested, duplicates, rewarded, voteRetries, givenUp []prometheus.Counter
	latency                                              []prometheus.Observer
	pending                                              prometheus.Gauge
	expiries                                             prometheus.Counter

	webhooks map[string]prometheus.Counter // by outcome label

	leader  prometheus.Gauge
	changes prometheus.Counter
	leadMu  sync.Mutex
	leading bool
}

// New makes the collectors and registers them with reg. It fails when reg is
// nil or refuses a collector: make one Collector per registry.
func New(reg prometheus.Registerer) (*Collector, error) {
	if typednil.Is(reg) { // a nil *prometheus.Registry would panic in Register
		return nil, errors.New("topggprom: New: nil Registerer")
	}
	c := &Collector{routes: routePaths()}
	c.api()
	c.jobs()
	c.votes()
	for i, m := range c.all {
		if err := reg.Register(m); err != nil {
			for _, r := range c.all[:i] {
				reg.Unregister(r)
			}
			return nil, fmt.Errorf("topggprom: New: %w", err)
		}
	}
	c.all = nil
	return c, nil
}

// add keeps m for New to register, and returns it.
func add[M prometheus.Collector](c *Collector, m M) M {
	c.all = append(c.all, m)
	return m
}

// counters makes a counter vector with one label and one counter per value,
// so that every series shows from the start.
func (c *Collector) counters(name, help, label string, values []string) []prometheus.Counter {
	v := add(c, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, []string{label}))
	out := make([]prometheus.Counter, len(values))
	for i, lv := range values {
		out[i] = v.WithLabelValues(lv)
	}
	return out
}

func (c *Collector) gauge(name, help string) prometheus.Gauge {
	return add(c, prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}))
}

func (c *Collector) counter(name, help string) prometheus.Counter {
	return add(c, prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}))
}

func (c *Collector) api() {
	c.requests = add(c, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "api_requests_total",
		Help: "Attempts of Top.gg API calls, by route family, method, status code (none: no answer; other: a code the service does not document) and outcome."},
		[]string{"route", "method", "code", "outcome"}))
	// The buckets, in seconds, span a fast answer to the client's 60 s timeout.
	c.durations = add(c, prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "api_request_duration_seconds",
		Help: "Time from sending an attempt of a Top.gg API call to reading its answer, by route family.", Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}},
		[]string{"route"}))
	c.retries = add(c, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "api_retries_total",
		Help: "Attempts of Top.gg API calls after the first, by route family."}, []string{"route"}))
	refused := add(c, prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "api_token_refused",
		Help: "1 while Top.gg refuses the token (its last answer of that API said so), else 0."}, []string{"api"}))
	c.refused = [2]prometheus.Gauge{refused.WithLabelValues("v1"), refused.WithLabelValues("v0")}
}

func (c *Collector) jobs() {
	c.posts = c.counters("autopost_posts_total", "Post attempts of the server count, by outcome.", "outcome", labels[autopost.Outcome](other))
	c.servers = c.gauge("autopost_servers", "Servers counted at the last post attempt.")
	c.shards = c.gauge("autopost_shards", "Shards counted at the last post attempt.")
	c.backfilled = c.counter("autopost_backfilled_samples_total", "Missed samples sent in a metrics batch.")
	c.lastPost = c.gauge("autopost_last_post_timestamp_seconds", "Unix time of the last successful post.")
	c.syncs = c.counters("commands_syncs_total", "Slash command syncs, by outcome.", "outcome", labels[commands.Outcome](other))
	outcomes := webhookOutcomes()
	c.webhooks = make(map[string]prometheus.Counter, len(outcomes))
	for i, m := range c.counters("webhook_requests_total", "Webhook deliveries, by outcome.", "outcome", outcomes) {
		c.webhooks[outcomes[i]] = m
	}
	c.leader = c.gauge("fleet_leader", "1 while this process leads the fleet, else 0.")
	c.changes = c.counter("fleet_leadership_changes_total", "Times this process won or lost the fleet's lead.")
}

func (c *Collector) votes() {
	src := labels[voterewards.Origin](other)
	c.ingested = c.counters("votes_ingested_total", "New votes stored, by the source that delivered them first.", "source", src)
	c.duplicates = c.counters("votes_duplicate_total", "Records of a vote already stored, by source.", "source", src)
	c.rewarded = c.counters("votes_rewarded_total", "Votes whose reward handler succeeded, by source.", "source", src)
	// The buckets, in seconds, span a vote rewarded at once to one retried for hours.
	latency := add(c, prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "vote_reward_latency_seconds",
		Help:    "Time from a vote's created_at to its reward handler's success, by source.",
		Buckets: []float64{.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 12 * 3600}}, []string{"source"}))
	for _, s := range src {
		c.latency = append(c.latency, latency.WithLabelValues(s))
	}
	c.voteRetries = c.counters("vote_reward_retries_total", "Reward handler attempts after the first, by source.", "source", src)
	c.givenUp = c.counters("votes_given_up_total", "Votes whose reward handler failed every attempt, by source.", "source", src)
	c.pending = c.gauge("votes_pending", "Votes stored and not yet rewarded that the running vote pipeline holds (queued, in progress, given up); 0 where none runs.")
	c.expiries = c.counter("vote_expiries_total", "Expiry handlers that succeeded.")
}
