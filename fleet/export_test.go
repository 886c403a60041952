package fleet

import "github.com/dblkit/go-topgg/internal/clock"

// WithReporterClock sets the reporter's clock (tests advance a fake one).
func WithReporterClock(cfg reporterConfig, c clock.Clock) reporterConfig {
	cfg.clock = c
	return cfg
}
