package plugin

import (
	"context"
	"fmt"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// WithFleet runs the plugin as one process of a fleet that shares Redis
// through f (see the fleet package): every process counts its own shards and
// publishes their counts; only the leader (one process at a time, elected by
// f's lease) posts the fleet's exact total, publishes the slash commands (the
// last published hash kept in Redis, its write fenced) and polls and delivers
// the votes. The leader's jobs run under a context that ends when the lease
// is lost, and start again when this process wins it back. The plugin does
// not close f: the caller does, after Run returned.
//
// The vote state lives in Redis ([fleet.Fleet.VoteStore]; a [WithVoteStore]
// store replaces it), not in Config.StateDir: every process mirrors it, so
// [Plugin.Active] answers in every process, and learns a vote any process
// ingests within moments. [Plugin.Counts] shows this process's own shards.
func WithFleet(f *fleet.Fleet) Option {
	return func(o *options) error {
		if f == nil {
			return nilArg("WithFleet")
		}
		if f.Lease() == nil {
			// A zero Fleet would fail later, naming the vote store or the counts.
			return fmt.Errorf("plugin: WithFleet: a fleet.Fleet %w (fleet.New, fleet.Open)", topgg.ErrNotConfigured)
		}
		o.fleet = f
		return nil
	}
}

// fleetParts are the jobs of fleet mode, built by New.
type fleetParts struct {
	f        *fleet.Fleet
	poster   *autopost.Poster    // the leader's, posting the fleet total; nil when autopost is off
	reporter *fleet.Reporter     // publishes this process's shards; nil when autopost is off
	poller   *voterewards.Poller // on the shared store; nil when vote polling is off
}

// leaderJob reports the jobs only the leader runs; any other job (a webhook
// receiver, say) runs in every process.
func leaderJob(name string) bool { return name == "autopost" || name == "commands" || name == "votes" }

// buildFleet replaces, in fleet mode, the poster's Source by the fleet total
// (the plugin's own poster stays as the Counter its sessions attach to) and
// the command hash store by the fenced one in Redis.
func (p *Plugin) buildFleet() error {
	f := p.opts.fleet
	if f == nil {
		return nil
	}
	parts := &fleetParts{f: f}
	if p.poster != nil {
		counter := p.poster.Counter()
		src, err := f.Source(counter)
		if err != nil {
			return err
		}
		if parts.reporter, err = f.Reporter(counter); err != nil {
			return err
		}
		mode := autopost.ModeV1
		if p.set.Autopost == AutopostV0 {
			mode = autopost.ModeV0
		}
		parts.poster, err = autopost.New(p.client, autopost.Config{
			Mode: mode, Interval: p.set.AutopostInterval, Refresh: p.set.AutopostRefresh,
			ReadyTimeout: p.set.AutopostReadyTimeout, Source: src, OnPost: p.opts.onPost, Logger: p.opts.logger,
		})
		if err != nil {
			return err
		}
	}
	if p.syncer != nil {
		syncer, err := commands.New(p.client, commands.Config{Store: f.HashStore(), Logger: p.opts.logger})
		if err != nil {
			return err
		}
		p.syncer = syncer
	}
	if p.set.votePoll > 0 {
		if p.opts.voteStore == nil {
			p.opts.voteStore = f.VoteStore() // also gives readiness its "vote_store" Ping
		}
		poller, err := p.newPoller(p.opts.voteStore)
		if err != nil {
			return err
		}
		parts.poller = poller
	}
	p.fleet = parts
	return nil
}

// fleetJobs turns the jobs of one process into those of a fleet process: the
// counts reporter, the jobs every process runs, and one job that campaigns
// for the lease and runs the leader-only jobs while it holds it. Without a
// fleet it returns jobs unchanged.
func (p *Plugin) fleetJobs(jobs []job) []job {
	if p.fleet == nil {
		return jobs
	}
	var out, leader []job
	if p.fleet.reporter != nil {
		out = append(out, job{"fleet reporter", p.fleet.reporter.Run})
	}
	for _, j := range jobs {
		switch {
		case !leaderJob(j.name):
			out = append(out, j)
		case j.name == "autopost":
			leader = append(leader, job{j.name, p.fleet.poster.Run})
		case j.name == "votes":
			out = append(out, job{"votes mirror", p.mirrorVotes})
			leader = append(leader, job{j.name, p.fleet.poller.Run})
		default:
			leader = append(leader, j)
		}
	}
	if len(leader) > 0 {
		lease := p.fleet.f.Lease()
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
func (p *Plugin) lead(ctx context.Context, jobs []job) error {
	p.leading(true)
	defer p.leading(false)
	return p.supervise(ctx, jobs)
}

// mirrorVotes keeps Active current in every process of the fleet.
func (p *Plugin) mirrorVotes(ctx context.Context) error {
	p.poller.Store(p.fleet.poller)
	return p.fleet.poller.Mirror(ctx)
}
