package fleet

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/dblkit/go-topgg/autopost"
)

var _ autopost.Source = (*totalSource)(nil)

// totalSource is the total of [Fleet.Counts]; BotID is local's. Safe for
// concurrent use.
type totalSource struct {
	counts *shardCounts
	local  *autopost.Counter
}

// newTotalSource returns the totalSource of counts and this process's own
// Counter; a nil Counter is an error.
func newTotalSource(counts *shardCounts, local *autopost.Counter) (*totalSource, error) {
	if local == nil {
		return nil, configError("local", "a nil *autopost.Counter")
	}
	return &totalSource{counts: counts, local: local}, nil
}

// Counts returns the fleet's total: the counts in Redis, with this process's
// own ready shards read fresher from local. Unavailable is 0: outages count.
func (s *totalSource) Counts(ctx context.Context) (autopost.Counts, error) {
	t, err := s.counts.total(ctx)
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

// Changed returns nil: other processes' reports are not signalled, so the
// Poster polls Counts until the total is complete.
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
// counter's ready shards on every [autopost.Counter.Changed] and every period.
func newCounterReporter(counts *shardCounts, counter *autopost.Counter, cfg reporterConfig) (*reporter, error) {
	if counter == nil {
		return nil, configError("local", "a nil *autopost.Counter")
	}
	// Reused buffers, no lock: one Run calls the function, one call at a time.
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

// Format prints the total as "fleet.Counts(total)" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*totalSource) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "fleet.Counts(total)") }
