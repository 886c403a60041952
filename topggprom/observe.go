package topggprom

import (
	"errors"
	"strings"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// ObserveRequest counts one attempt of an API call: an observer for
// [topgg.WithObserver]. A route not in [topgg.Routes] is counted as "unknown".
func (c *Collector) ObserveRequest(r topgg.Request) {
	m, path, _ := strings.Cut(r.Route, " ")
	method := method(m)
	route, ok := c.routes[r.Route]
	if !ok {
		route = unknown
	}
	outcome := requestOutcome(r.Err)
	c.requests.WithLabelValues(route, method, code(r.Status), outcome).Inc()
	if outcome != "blocked" {
		c.durations.WithLabelValues(route).Observe(r.Duration.Seconds())
	}
	if r.Attempt > 1 {
		c.retries.WithLabelValues(route).Inc()
	}
	api := 0
	if path == "/bots" || strings.HasPrefix(path, "/bots/") { // v0, known route or not
		api = 1
	}
	switch {
	case errors.Is(r.Err, topgg.ErrUnauthorized):
		c.refused[api].Set(1)
	case r.Status >= 200 && r.Status < 300:
		c.refused[api].Set(0)
	}
}

// ObservePost counts one post attempt of the server count: an
// autopost.Config.OnPost as it is.
func (c *Collector) ObservePost(r autopost.Result) {
	o := r.Outcome
	c.posts[at(o, len(c.posts))].Inc()
	c.servers.Set(float64(r.Servers))
	c.shards.Set(float64(r.Shards))
	c.backfilled.Add(float64(max(r.Backfilled, 0)))
	if o == autopost.OutcomePosted {
		c.lastPost.SetToCurrentTime()
	}
}

// ObserveSync counts one slash command sync, as commands.Config.OnResult
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
	switch t := e.Type; {
	case t == voterewards.EventIngested:
		c.ingested[i].Add(float64(max(e.Added, 0)))
		c.duplicates[i].Add(float64(max(e.Duplicates, 0)))
	case t == voterewards.EventPending:
		c.pending.Set(float64(e.Pending))
	case e.Expiry: // of an expiry handler, only its success counts
		if t == voterewards.EventDelivered {
			c.expiries.Inc()
		}
	case t == voterewards.EventDelivered:
		c.rewarded[i].Inc()
		c.latency[i].Observe(max(e.Latency, 0).Seconds())
	case t == voterewards.EventRetried:
		c.voteRetries[i].Inc()
	case t == voterewards.EventGivenUp:
		c.givenUp[i].Inc()
	}
}

// ObserveWebhook counts one webhook delivery by how it was answered: a
// webhook.Config.Observer as it is.
func (c *Collector) ObserveWebhook(err error) {
	c.webhooks[webhookOutcome(err)].Inc()
}

// ObserveLease records whether this process leads the fleet (a fleet.Config.OnChange);
// a change from the last call counts as a leadership change.
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
