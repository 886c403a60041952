package plugin

import (
	"context"
	"fmt"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/internal/term"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// WithFleet runs the plugin as one process of a fleet that shares Redis
// through f (see the fleet package): every process publishes its own shards'
// counts; only the leader (elected by f's lease, its jobs stopped when the
// lease is lost) posts the total, publishes the commands and polls and
// delivers the votes. The plugin does not close f: the caller does, after
// Run returned.
//
// The vote state lives in Redis (a [WithVoteStore] store replaces it), not
// in Config.StateDir: every process mirrors it, so [Plugin.Active] answers
// in every process, and learns a vote any process ingests within moments.
// [Plugin.Counts] shows this process's own shards.
func WithFleet(f *fleet.Fleet) Option {
	return func(o *options) error {
		if f == nil {
			return nilArg("WithFleet")
		}
		if f.Lease() == nil {
			// A zero Fleet would fail later, naming the vote store or the counts.
			return fmt.Errorf("plugin: WithFleet: a fleet.Fleet %w (fleet.New, fleet.Open)", topgg.ErrNotConfigured)
		}
		o.newFleet = func() backend { return &fleetBackend{f: f} }
		return nil
	}
}

// fleetBackend is the backend of one process of a fleet: the leader posts
// the fleet's total and keeps the command hash and the votes in Redis.
type fleetBackend struct {
	f      *fleet.Fleet
	report func(context.Context) error // publishes this process's shards; nil when autopost is off
}

func (b *fleetBackend) source(local *autopost.Counter) (autopost.Source, error) {
	total, report, err := b.f.Counts(local)
	if err != nil {
		return nil, err
	}
	b.report = report
	return total, nil
}

func (b *fleetBackend) hashes() commands.HashStore { return b.f.HashStore() }

func (b *fleetBackend) votes() voterewards.Store { return b.f.VoteStore() }

func (b *fleetBackend) open() (func() error, error) { return func() error { return nil }, nil }

// jobs returns the jobs every process runs (the counts reporter, the votes
// mirror) and one that campaigns for the lease and runs the leader-only jobs
// while it holds it.
func (b *fleetBackend) jobs(p *Plugin, leader []job) []job {
	var out []job
	if b.report != nil {
		out = append(out, job{"fleet reporter", b.report})
	}
	if p.votes != nil {
		out = append(out, job{"votes mirror", func(ctx context.Context) error {
			p.poller.Store(p.votes)
			return p.votes.Mirror(ctx)
		}})
	}
	if len(leader) > 0 {
		lease := b.f.Lease()
		out = append(out, job{"fleet leader", func(ctx context.Context) error {
			return lease.Run(ctx, func(ctx context.Context, _ int64) error { return p.lead(ctx, leader) })
		}})
	}
	return out
}

// lead runs the leader-only jobs of one term under the supervisor until ctx
// ends (the lease is lost or the plugin stops). A job that fails for good
// ends the term's other jobs, and its error ends the lease's Run, and so the
// plugin's.
//
// ctx carries the term (fleet.Lease.Run puts it there): each job checks it
// right before each leader-only action (autopost before each post, commands
// before the read and the publish, votes before each history request and
// each handler call, the client before each Top.gg request), so that a
// process resumed past its lease starts nothing, and the first check that
// finds the term over cancels ctx for every job of the term.
func (p *Plugin) lead(ctx context.Context, jobs []job) error {
	if term.From(ctx) == nil {
		// Every leader-only action would pass its check: refuse to lead
		// rather than act without a deadline.
		return fmt.Errorf("plugin: %w: the leader's context carries no term", topgg.ErrNotConfigured)
	}
	p.leading(true)
	defer p.leading(false)
	return p.supervise(ctx, jobs)
}

// leadershipBackend is a backend whose process may lead: its readiness
// includes knowing whether it does.
type leadershipBackend interface {
	leadershipCheck() health.Check
}

func (b *fleetBackend) leadershipCheck() health.Check {
	return health.Check{Name: "leadership", Func: b.f.Lease().Check}
}
