package plugin

import "github.com/dblkit/go-topgg/internal/clock"

// WithClock sets the clock of the supervisor and of the command resync, for tests.
func WithClock(c clock.Clock) Option {
	return func(o *options) error {
		o.clock = c
		return nil
	}
}
