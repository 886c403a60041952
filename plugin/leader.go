package plugin

import (
	"context"
	"errors"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/voterewards"
)

// leader is DESIGN's Leader axis, who may act and until when: this process
// always, or the holder of a fleet's lease while its term holds. The state is
// the other axis; New hands it the leader's fence.
type leader interface {
	// counts returns what the poster posts, given this process's counter,
	// and the job that publishes this process's shards (nil: none).
	counts(local *autopost.Counter) (autopost.Source, func(context.Context) error, error)
	// fence is what the state checks on each leader write (nil: always leads).
	fence() voterewards.Fence
	// jobs returns the jobs of one Run: lead runs under supervise, now or in
	// each term (told to leading), and every beside it.
	jobs(lead, every []job, supervise func(context.Context, []job) error, leading func(bool)) []job
	// checks are the leader's readiness checks.
	checks() []health.Check
}

// always is the leader of a bot in one process: itself, now and always.
type always struct{}

func (always) counts(local *autopost.Counter) (autopost.Source, func(context.Context) error, error) {
	return local, nil, nil
}

func (always) fence() voterewards.Fence { return nil }

func (always) jobs(lead, _ []job, _ func(context.Context, []job) error, _ func(bool)) []job {
	return lead
}

func (always) checks() []health.Check { return nil }

// WithFleet runs the plugin as one process of f: the leader-only jobs run under f's
// lease, which fences the (shareable) state. Close f after Run returned.
func WithFleet(f *fleet.Fleet) Option {
	// An interface value, not a *fleet.Fleet field: a bot without WithFleet
	// links neither the fleet nor go-redis.
	return setOption("WithFleet", f, false, func(o *options, f *fleet.Fleet) { o.leader = fleetLeader{f} })
}

// fleetLeader is the leader of a fleet: the holder of f's lease.
type fleetLeader struct{ f *fleet.Fleet }

func (l fleetLeader) counts(local *autopost.Counter) (autopost.Source, func(context.Context) error, error) {
	return l.f.Counts(local)
}

func (l fleetLeader) fence() voterewards.Fence {
	lease := l.f.Lease()
	return func() int64 { return lease.State().Token }
}

// jobs runs every, and lead each term under the lease; the term travels in
// lead's context, to packages that know nothing of fleets.
func (l fleetLeader) jobs(lead, every []job, supervise func(context.Context, []job) error, leading func(bool)) []job {
	if len(lead) == 0 {
		return every
	}
	return append(every, job{"fleet leader", func(ctx context.Context) error {
		return l.f.Lease().Run(ctx, func(ctx context.Context, _ int64) error {
			if clock.TermFrom(ctx) == nil {
				// Every leader-only check would pass: refuse to lead without a deadline.
				return errors.New("plugin: the leader's context carries no term")
			}
			leading(true)
			defer leading(false)
			return supervise(ctx, lead)
		})
	}})
}

func (l fleetLeader) checks() []health.Check {
	return []health.Check{{Name: "leadership", Func: l.f.Lease().Check}}
}
