package topggprom

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// ObserveRequest counts one attempt of an API call: a [topgg.Observer].
func (c *Collector) ObserveRequest(r topgg.Request) {
	c.requestCounter(r).Inc()
	i := at(r.Route, len(c.routes))
	if r.Outcome != topgg.OutcomeBlocked {
		c.durations[i].Observe(r.Duration.Seconds())
	}
	if r.Attempt > 1 {
		c.retries[i].Inc()
	}
	api := 0
	if r.Route >= topgg.RouteLegacyBots {
		api = 1
	}
	switch {
	case errors.Is(r.Err, topgg.ErrUnauthorized):
		c.refused[api].Set(1)
	case r.Status >= 200 && r.Status < 300:
		c.refused[api].Set(0)
	}
}

// requestCounter returns the counter of r's labels, made once.
func (c *Collector) requestCounter(r topgg.Request) prometheus.Counter {
	k := requestKey{route: r.Route, method: method(r.Method), code: code(r.Status), outcome: r.Outcome}
	if at(k.route, len(c.routes)) == 0 {
		k.route = 0
	}
	if at(k.outcome, len(c.outcomes)) == 0 {
		k.outcome = 0
	}
	c.reqMu.RLock()
	m, ok := c.reqCache[k]
	c.reqMu.RUnlock()
	if ok {
		return m
	}
	c.reqMu.Lock()
	defer c.reqMu.Unlock()
	if m, ok = c.reqCache[k]; !ok {
		m = c.requests.WithLabelValues(c.routes[k.route], k.method, k.code, c.outcomes[k.outcome])
		c.reqCache[k] = m
	}
	return m
}

// ObservePost counts one post attempt of the server count: an
// autopost.Config.OnPost as it is.
func (c *Collector) ObservePost(r autopost.Result) {
	o := r.Outcome
	c.posts[at(o, len(c.posts))].Inc()
	c.servers.Set(float64(r.Servers))
	c.shards.Set(float64(r.Shards))
	if r.Backfilled > 0 {
		c.backfilled.Add(float64(r.Backfilled))
	}
	if o == autopost.OutcomePosted {
		c.lastPost.SetToCurrentTime()
	}
}

// ObserveSync counts one slash command sync, as commands.JobConfig.OnResult
// reports it, without its context.
func (c *Collector) ObserveSync(r commands.Result, err error) {
	o := r.Outcome
	if err != nil {
		o = commands.OutcomeFailed
	}
	c.syncs[at(o, len(c.syncs))].Inc()
}

// ObserveVote counts one event of the vote pipeline (a voterewards.Config.Observer);
// an expiry handler counts only when it succeeds, a negative latency as 0.
func (c *Collector) ObserveVote(e voterewards.Event) {
	i := at(e.Origin, len(c.ingested))
	reward := !e.Expiry
	switch e.Type {
	case voterewards.EventIngested:
		if e.Added > 0 {
			c.ingested[i].Add(float64(e.Added))
		}
		if e.Duplicates > 0 {
			c.duplicates[i].Add(float64(e.Duplicates))
		}
	case voterewards.EventDelivered:
		if reward {
			c.rewarded[i].Inc()
			c.latency[i].Observe(max(e.Latency, 0).Seconds())
		} else {
			c.expiries.Inc()
		}
	case voterewards.EventRetried:
		if reward {
			c.voteRetries[i].Inc()
		}
	case voterewards.EventGivenUp:
		if reward {
			c.givenUp[i].Inc()
		}
	case voterewards.EventPending:
		c.pending.Set(float64(e.Pending))
	}
}

// ObserveWebhook counts one webhook delivery by how it was answered: a
// webhook.Config.Observer as it is.
func (c *Collector) ObserveWebhook(o webhook.Outcome) {
	c.webhooks[at(o, len(c.webhooks))].Inc()
}

// ObserveLease records whether this process leads the fleet: a
// fleet.LeaseConfig.OnChange as it is. A change from the last call counts as
// a leadership change.
func (c *Collector) ObserveLease(s fleet.LeaseState) {
	c.leadMu.Lock()
	defer c.leadMu.Unlock()
	if s.Leader != c.leading {
		c.changes.Inc()
		c.leading = s.Leader
	}
	if s.Leader {
		c.leader.Set(1)
	} else {
		c.leader.Set(0)
	}
}
