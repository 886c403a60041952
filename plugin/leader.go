package plugin

import (
	"context"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/voterewards"
)

// leader is DESIGN's Leader axis, who may act and until when: this process
// always (always, below), or the holder of a fleet's lease while its term
// holds (fleetLeader, fleet.go). The state is the other axis, one
// voterewards.State given with [WithState]; New hands it the leader's fence.
type leader interface {
	// counts returns what the poster posts, given this process's counter,
	// and the job that publishes this process's shards (nil: none).
	counts(local *autopost.Counter) (autopost.Source, func(context.Context) error, error)
	// fence is what the state checks on each leader write: nil when this
	// process always leads.
	fence() voterewards.Fence
	// run runs lead each time this process becomes the leader, until ctx is
	// done; lead's context ends with the term, which leading is told of.
	run(ctx context.Context, lead func(context.Context) error, leading func(bool)) error
	// checks are the leader's readiness checks.
	checks() []health.Check
}

// always is the leader of a bot in one process: itself, now and always.
type always struct{}

func (always) counts(local *autopost.Counter) (autopost.Source, func(context.Context) error, error) {
	return local, nil, nil
}

func (always) fence() voterewards.Fence { return nil }

func (always) run(ctx context.Context, lead func(context.Context) error, _ func(bool)) error {
	return lead(ctx)
}

func (always) checks() []health.Check { return nil }
