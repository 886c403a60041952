package plugin

import (
	"context"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/health"
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
