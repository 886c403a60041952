package fleet

import (
	"context"
	"fmt"
	"slices"

	"github.com/dblkit/go-topgg/autopost"
)

var _ autopost.Source = (*totalSource)(nil)

// totalSource is the total of [Fleet.Counts] (see there what it promises).
// BotID, which v0 posts need, is local's (its READY). Safe for concurrent use.
type totalSource struct {
	counts *shardCounts
	local  *autopost.Counter
}

// newTotalSource returns the totalSource of counts. local is this process's own
// Counter, the one its sessions are attached to: it gives BotID. It fails
// with [ErrBadConfig] for a nil Counter.
func newTotalSource(counts *shardCounts, local *autopost.Counter) (*totalSource, error) {
	if local == nil {
		return nil, fmt.Errorf("%w: nil *autopost.Counter", ErrBadConfig)
	}
	return &totalSource{counts: counts, local: local}, nil
}

// Counts returns the fleet's total as the Poster posts it: the counts in
// Redis, with this process's own ready shards read from local instead (they
// are newer than its last publish, which may be up to minPublishGap old).
// Unavailable is 0: the processes publish their shards' guild counts,
// outages included, not how many are unavailable. A Redis error is returned
// (the Poster retries with backoff).
func (s *totalSource) Counts(ctx context.Context) (autopost.Counts, error) {
	t, err := s.counts.Total(ctx)
	if err != nil {
		return autopost.Counts{}, err
	}
	local, err := s.local.Counts(ctx)
	if err != nil {
		return autopost.Counts{}, err
	}
	overlay(&t, s.local.AppendShards(nil))
	return autopost.Counts{
		Servers:  int(t.Servers),
		Shards:   t.ShardCount,
		PerShard: t.PerShard,
		Missing:  t.Missing,
		BotID:    local.BotID,
	}, nil
}

// Changed returns nil: other processes' first reports are not signalled, so
// the Poster asks Counts again every sixteenth of its interval (at most every
// minute) until the total is complete.
func (s *totalSource) Changed() <-chan struct{} { return nil }

// overlay puts this process's ready shards' counts in t, in place of what
// Redis holds for them.
func overlay(t *fleetTotal, local []autopost.ShardStats) {
	for _, sh := range local {
		if !sh.Ready || sh.ID < 0 || sh.ID >= t.ShardCount {
			continue
		}
		t.Servers += int64(sh.Servers - t.PerShard[sh.ID])
		t.PerShard[sh.ID] = sh.Servers
		t.Missing = slices.DeleteFunc(t.Missing, func(id int) bool { return id == sh.ID })
	}
}

// newCounterReporter returns the report job of [Fleet.Counts]: it publishes
// counter's shards that have their READY (one not ready keeps its last count
// for MaxAge, as a stopped process's), on every [autopost.Counter.Changed]
// (a join, a leave, an outage, a READY, an attach or a detach), at most once
// per minPublishGap, and every period.
// The buffers are reused, so a publish allocates nothing once they have grown.
func newCounterReporter(counts *shardCounts, counter *autopost.Counter, cfg reporterConfig) (*reporter, error) {
	if counter == nil {
		return nil, fmt.Errorf("%w: nil *autopost.Counter", ErrBadConfig)
	}
	// The buffers need no lock: only the reporter's Run calls the function,
	// one Run at a time, and it is done with the slice before the next call.
	var (
		stats []autopost.ShardStats
		out   []shardReport
	)
	r, err := newReporter(counts, func() []shardReport {
		stats = counter.AppendShards(stats[:0])
		out = out[:0]
		for _, s := range stats {
			if s.Ready {
				out = append(out, shardReport{Shard: s.ID, Guilds: s.Servers})
			}
		}
		return out
	}, cfg)
	if err != nil {
		return nil, err
	}
	r.changed = counter.Changed
	return r, nil
}
