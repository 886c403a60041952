package autopost

import "github.com/dblkit/go-topgg/internal/clock"

// WithClock returns cfg with its waits timed by c: tests advance a fake
// clock instead of sleeping.
func WithClock(cfg Config, c clock.Clock) Config {
	cfg.clock = c
	return cfg
}
