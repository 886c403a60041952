package topggprom

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dblkit/go-topgg/topgg"
)

const namespace = "topgg"

// requestBuckets, in seconds, span a fast answer to the client's 60 s timeout.
func requestBuckets() []float64 { return []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60} }

// rewardBuckets, in seconds, span a webhook vote rewarded at once to one the
// poll found late or a handler retried for hours.
func rewardBuckets() []float64 {
	return []float64{.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 12 * 3600}
}

// Metrics holds the collectors. Make it with [New]; its methods are the
// hooks, safe for concurrent use, and cost no allocation once a label
// combination has been seen. The hooks of a nil or zero Metrics do nothing.
type Metrics struct {
	codes *statusCodes
	// sets are the label values of each hook, resolved once.
	sets struct{ posts, syncs, sources, webhooks []string }

	requests    *prometheus.CounterVec
	reqMu       sync.RWMutex
	reqCache    map[requestKey]prometheus.Counter
	durations   [topggRoutes]prometheus.Observer
	retries     [topggRoutes]prometheus.Counter
	refused     [2]prometheus.Gauge // v1, v0
	posts       []prometheus.Counter
	servers     prometheus.Gauge
	shards      prometheus.Gauge
	backfilled  prometheus.Counter
	lastPost    prometheus.Gauge
	syncs       []prometheus.Counter
	ingested    []prometheus.Counter
	duplicates  []prometheus.Counter
	rewarded    []prometheus.Counter
	latency     []prometheus.Observer
	voteRetries []prometheus.Counter
	givenUp     []prometheus.Counter
	pending     prometheus.Gauge
	expiries    prometheus.Counter
	webhooks    []prometheus.Counter
	leader      prometheus.Gauge
	changes     prometheus.Counter

	leadMu  sync.Mutex
	leading bool
}

// topggRoutes sizes the per-route arrays: every topgg.Route and the zero
// value (counted as "unknown").
const topggRoutes = 16

type requestKey struct {
	route   topgg.Route
	method  string
	status  int
	outcome topgg.Outcome
}

// New makes the collectors and registers them with reg (for example
// prometheus.DefaultRegisterer, or a prometheus.NewRegistry()). It fails
// when reg is nil or refuses a collector (one of the same name is already
// registered: make one Metrics per registry).
func New(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("topggprom: New: nil Registerer")
	}
	if rv := reflect.ValueOf(reg); rv.Kind() == reflect.Pointer && rv.IsNil() {
		// A nil *prometheus.Registry would panic in Register.
		return nil, fmt.Errorf("topggprom: New: nil %T", reg)
	}
	m := &Metrics{codes: newStatusCodes(), reqCache: make(map[requestKey]prometheus.Counter)}
	m.sets.posts, m.sets.syncs, m.sets.sources, m.sets.webhooks = autopostOutcomes(), commandOutcomes(), voteSources(), webhookOutcomes()
	var cs []prometheus.Collector
	add := func(c prometheus.Collector) { cs = append(cs, c) }
	m.api(add)
	m.autopost(add)
	m.votes(add)
	m.fleet(add)
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("topggprom: New: %w", err)
		}
	}
	return m, nil
}

// counters makes a counter vector with one label and resolves one counter
// per value of set and "other", so that every series shows from the start.
func counters(add func(prometheus.Collector), name, help, label string, set []string) []prometheus.Counter {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, []string{label})
	add(v)
	values := withOther(set)
	out := make([]prometheus.Counter, len(values))
	for i, lv := range values {
		out[i] = v.WithLabelValues(lv)
	}
	return out
}

func gauge(add func(prometheus.Collector), name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help})
	add(g)
	return g
}

func counter(add func(prometheus.Collector), name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help})
	add(c)
	return c
}

func (m *Metrics) api(add func(prometheus.Collector)) {
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "api_requests_total",
		Help: "Attempts of Top.gg API calls, by route family, method, status code (none: no answer) and outcome."},
		[]string{"route", "method", "code", "outcome"})
	add(m.requests)
	durations := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "api_request_duration_seconds",
		Help: "Time from sending an attempt of a Top.gg API call to reading its answer, by route family.", Buckets: requestBuckets()},
		[]string{"route"})
	add(durations)
	retries := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "api_retries_total",
		Help: "Attempts of Top.gg API calls after the first, by route family."}, []string{"route"})
	add(retries)
	for i := range topggRoutes {
		r := topgg.Route(i).String()
		m.durations[i], m.retries[i] = durations.WithLabelValues(r), retries.WithLabelValues(r)
	}
	refused := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "api_token_refused",
		Help: "1 while Top.gg refuses the token (its last answer of that API said so), else 0."}, []string{"api"})
	add(refused)
	m.refused = [2]prometheus.Gauge{refused.WithLabelValues("v1"), refused.WithLabelValues("v0")}
}

func (m *Metrics) autopost(add func(prometheus.Collector)) {
	m.posts = counters(add, "autopost_posts_total", "Post attempts of the server count, by outcome.", "outcome", autopostOutcomes())
	m.servers = gauge(add, "autopost_servers", "Servers counted at the last post attempt.")
	m.shards = gauge(add, "autopost_shards", "Shards counted at the last post attempt.")
	m.backfilled = counter(add, "autopost_backfilled_samples_total", "Missed samples sent in a metrics batch.")
	m.lastPost = gauge(add, "autopost_last_post_timestamp_seconds", "Unix time of the last successful post.")
	m.syncs = counters(add, "commands_syncs_total", "Slash command syncs, by outcome.", "outcome", commandOutcomes())
}

func (m *Metrics) votes(add func(prometheus.Collector)) {
	src := voteSources()
	m.ingested = counters(add, "votes_ingested_total", "New votes stored, by the source that delivered them first.", "source", src)
	m.duplicates = counters(add, "votes_duplicate_total", "Records of a vote already stored, by source.", "source", src)
	m.rewarded = counters(add, "votes_rewarded_total", "Votes whose reward handler succeeded, by source.", "source", src)
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "vote_reward_latency_seconds",
		Help: "Time from a vote's created_at to its reward handler's success, by source.", Buckets: rewardBuckets()}, []string{"source"})
	add(latency)
	for _, s := range withOther(src) {
		m.latency = append(m.latency, latency.WithLabelValues(s))
	}
	m.voteRetries = counters(add, "vote_reward_retries_total", "Reward handler attempts after the first, by source.", "source", src)
	m.givenUp = counters(add, "votes_given_up_total", "Votes whose reward handler failed every attempt, by source.", "source", src)
	m.pending = gauge(add, "votes_pending", "Votes stored and not yet rewarded that the running vote pipeline holds (queued, in progress, given up); 0 where none runs.")
	m.expiries = counter(add, "vote_expiries_total", "Expiry handlers that succeeded.")
	m.webhooks = counters(add, "webhook_requests_total", "Webhook deliveries, by outcome.", "outcome", webhookOutcomes())
}

func (m *Metrics) fleet(add func(prometheus.Collector)) {
	m.leader = gauge(add, "fleet_leader", "1 while this process leads the fleet, else 0.")
	m.changes = counter(add, "fleet_leadership_changes_total", "Times this process won or lost the fleet's lead.")
}
