package fleet

import "github.com/dblkit/go-topgg/internal/clock"

// WithReporterClock sets the reporter's clock (tests advance a fake one).
func WithReporterClock(cfg reporterConfig, c clock.Clock) reporterConfig {
	cfg.clock = c
	return cfg
}

// Postable reports whether the total covers every shard.
func (t fleetTotal) Postable() bool { return t.ShardCount > 0 && len(t.Missing) == 0 }
