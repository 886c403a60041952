package topggprom

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dblkit/go-topgg/topgg"
)

// ObserveRequest counts one attempt of an API call: give it to the client
// with topgg.WithObserver(m.ObserveRequest). A label combination seen before
// costs a map lookup under a read lock and no allocation.
func (m *Metrics) ObserveRequest(r topgg.Request) {
	if m.off() {
		return
	}
	m.requestCounter(r).Inc()
	i := int(r.Route)
	if i >= topggRoutes {
		i = 0
	}
	if r.Outcome != topgg.OutcomeBlocked {
		m.durations[i].Observe(r.Duration.Seconds())
	}
	if r.Attempt > 1 {
		m.retries[i].Inc()
	}
	api := 0
	if r.Route >= topgg.RouteLegacyBots {
		api = 1
	}
	switch {
	case errors.Is(r.Err, topgg.ErrUnauthorized):
		m.refused[api].Set(1)
	case r.Status >= 200 && r.Status < 300:
		m.refused[api].Set(0)
	}
}

// requestCounter returns the counter of r's labels, made once.
func (m *Metrics) requestCounter(r topgg.Request) prometheus.Counter {
	k := requestKey{route: r.Route, method: method(r.Method), status: r.Status, outcome: r.Outcome}
	if k.status < 100 || k.status > 599 {
		k.status = 0
	}
	m.reqMu.RLock()
	c, ok := m.reqCache[k]
	m.reqMu.RUnlock()
	if ok {
		return c
	}
	m.reqMu.Lock()
	defer m.reqMu.Unlock()
	if c, ok = m.reqCache[k]; !ok {
		c = m.requests.WithLabelValues(k.route.String(), k.method, m.codes.code(k.status), k.outcome.String())
		m.reqCache[k] = c
	}
	return c
}

// AutopostAttempt counts one post attempt: outcome is autopost.Result's
// Outcome(), servers and shards the counts it posted (or would have), and
// backfilled the missed samples it sent first. Give it to the Poster with
// an OnPost of one line (see the package example).
func (m *Metrics) AutopostAttempt(outcome string, servers, shards, backfilled int) {
	if m.off() {
		return
	}
	m.posts[index(outcome, m.sets.posts)].Inc()
	m.servers.Set(float64(servers))
	m.shards.Set(float64(shards))
	if backfilled > 0 {
		m.backfilled.Add(float64(backfilled))
	}
	if outcome == "posted" {
		m.lastPost.SetToCurrentTime()
	}
}

// CommandSync counts one slash command sync; outcome is commands.Outcome's.
func (m *Metrics) CommandSync(outcome string) {
	if m.off() {
		return
	}
	m.syncs[index(outcome, m.sets.syncs)].Inc()
}

// VotesIngested counts the records of votes that one source delivered:
// added new votes stored, duplicates records of votes already stored.
// source is voterewards.Origin's String() ("history", "webhook",
// "webhook-v0").
func (m *Metrics) VotesIngested(source string, added, duplicates int) {
	if m.off() {
		return
	}
	i := index(source, m.sets.sources)
	if added > 0 {
		m.ingested[i].Add(float64(added))
	}
	if duplicates > 0 {
		m.duplicates[i].Add(float64(duplicates))
	}
}

// VoteRewarded counts a vote whose reward handler succeeded, latency after
// its created_at (a negative latency, from a clock ahead of this one, counts
// as 0).
func (m *Metrics) VoteRewarded(source string, latency time.Duration) {
	if m.off() {
		return
	}
	i := index(source, m.sets.sources)
	m.rewarded[i].Inc()
	m.latency[i].Observe(max(latency, 0).Seconds())
}

// VoteRetried counts a reward handler attempt after the first.
func (m *Metrics) VoteRetried(source string) {
	if m.off() {
		return
	}
	m.voteRetries[index(source, m.sets.sources)].Inc()
}

// VoteGivenUp counts a vote whose reward handler failed every attempt.
func (m *Metrics) VoteGivenUp(source string) {
	if m.off() {
		return
	}
	m.givenUp[index(source, m.sets.sources)].Inc()
}

// VotesPending sets the number of votes stored and not yet rewarded that the
// running vote pipeline holds (voterewards.EventPending).
func (m *Metrics) VotesPending(n int) {
	if m.off() {
		return
	}
	m.pending.Set(float64(n))
}

// VoteExpired counts an expiry handler that succeeded.
func (m *Metrics) VoteExpired() {
	if m.off() {
		return
	}
	m.expiries.Inc()
}

// WebhookRequest counts one webhook delivery by its outcome, one of the
// Webhook* constants (anything else counts as "other").
func (m *Metrics) WebhookRequest(outcome string) {
	if m.off() {
		return
	}
	m.webhooks[index(outcome, m.sets.webhooks)].Inc()
}

// FleetLeader records whether this process leads the fleet now; a change
// from the last call counts as a leadership change.
func (m *Metrics) FleetLeader(leading bool) {
	if m.off() {
		return
	}
	m.leadMu.Lock()
	defer m.leadMu.Unlock()
	if leading != m.leading {
		m.changes.Inc()
		m.leading = leading
	}
	if leading {
		m.leader.Set(1)
	} else {
		m.leader.Set(0)
	}
}

// off reports a nil or zero Metrics (one not made by [New], or the nil of a
// New that failed): its hooks then do nothing, rather than panic inside the
// client or the job that calls them.
func (m *Metrics) off() bool { return m == nil || m.codes == nil }
