package fleet

import "github.com/dblkit/go-topgg/internal/clock"

// WithReporterClock sets the Reporter's clock (tests advance a fake one).
func WithReporterClock(cfg ReporterConfig, c clock.Clock) ReporterConfig {
	cfg.clock = c
	return cfg
}
