package plugin

import (
	"context"
	"time"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// Metrics receives the measurements of every job the plugin builds: autopost
// attempts, command syncs, the vote pipeline, the webhook receiver and fleet
// leadership. *topggprom.Metrics satisfies it; the plugin itself imports no
// metrics library. Its methods are called synchronously from the jobs'
// goroutines: they must be safe for concurrent use and return quickly. The
// label values they get come from fixed sets (outcomes, vote origins), never
// from an id.
//
// The API client's own requests are measured by the client: give it the
// observer when making it (topgg.WithObserver(m.ObserveRequest)).
type Metrics interface {
	// AutopostAttempt: one post attempt (outcome is autopost.Result.Outcome).
	AutopostAttempt(outcome string, servers, shards, backfilled int)
	// CommandSync: one command sync (outcome is commands.Outcome).
	CommandSync(outcome string)
	// VotesIngested: records of votes a source delivered (source is
	// voterewards.Origin.String): added new, duplicates already stored.
	VotesIngested(source string, added, duplicates int)
	// VoteRewarded: a reward handler succeeded, latency after the vote's
	// created_at.
	VoteRewarded(source string, latency time.Duration)
	// VoteRetried: a reward handler is called again after a failure.
	VoteRetried(source string)
	// VoteGivenUp: a reward handler failed every attempt (the vote stays
	// pending).
	VoteGivenUp(source string)
	// VotesPending: the rewards the vote pipeline holds and has not
	// delivered.
	VotesPending(n int)
	// VoteExpired: an expiry handler succeeded.
	VoteExpired()
	// WebhookRequest: one webhook delivery answered (outcome is
	// webhook.Outcome.String).
	WebhookRequest(outcome string)
	// FleetLeader: this process became the fleet's leader, or ceased to be.
	FleetLeader(leading bool)
}

// WithMetrics sends the measurements of every job to m (see [Metrics]),
// alongside the handlers given with [WithOnPost] and [WithCommandSyncHandler].
func WithMetrics(m Metrics) Option {
	return func(o *options) error {
		if typednil.Is(m) {
			return nilArg("WithMetrics")
		}
		o.metrics = m
		return nil
	}
}

// wireMetrics folds the Metrics into the hooks the jobs are built with; New
// calls it once every option is applied.
func (o *options) wireMetrics() {
	m := o.metrics
	if m == nil {
		return
	}
	onPost := o.onPost
	o.onPost = func(r autopost.Result) {
		m.AutopostAttempt(r.Outcome(), r.Servers, r.Shards, r.Backfilled)
		if onPost != nil {
			onPost(r)
		}
	}
	onSync := o.onSync
	o.onSync = func(ctx context.Context, r commands.Result, err error) {
		m.CommandSync(commands.Outcome(r, err))
		if onSync != nil {
			onSync(ctx, r, err)
		}
	}
	o.voteObserver = voteObserver(m)
	o.webhookObserver = func(out webhook.Outcome) { m.WebhookRequest(out.String()) }
}

// voteObserver turns the vote pipeline's events into m's calls. Expiry
// handlers count only when they succeed.
func voteObserver(m Metrics) voterewards.Observer {
	return func(e voterewards.Event) {
		reward := e.Kind == voterewards.KindReward
		switch e.Type {
		case voterewards.EventIngested:
			m.VotesIngested(e.Origin.String(), e.Added, e.Duplicates)
		case voterewards.EventDelivered:
			if reward {
				m.VoteRewarded(e.Origin.String(), e.Latency)
			} else {
				m.VoteExpired()
			}
		case voterewards.EventRetried:
			if reward {
				m.VoteRetried(e.Origin.String())
			}
		case voterewards.EventGivenUp:
			if reward {
				m.VoteGivenUp(e.Origin.String())
			}
		case voterewards.EventPending:
			m.VotesPending(e.Pending)
		}
	}
}

// leading tells the Metrics, if any, that this process leads the fleet or
// no longer does. The fleet's leader job calls it at the start and the end
// of each term.
func (p *Plugin) leading(yes bool) {
	if p.opts.metrics != nil {
		p.opts.metrics.FleetLeader(yes)
	}
}
