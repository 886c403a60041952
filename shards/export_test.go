package shards

import (
	"fmt"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// WithClock sets the clock of the rate-limit waits and of the abort grace.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) error { cfg.clock = c; return nil }
}

// WithAbortGrace sets how long Open waits for an aborted discordgo Open.
func WithAbortGrace(d time.Duration) Option {
	return func(cfg *config) error { cfg.abortGrace = d; return nil }
}

const MaxShards = maxShards

// WithMaxBodySize bounds every REST response body (default 8 MiB), for the
// tests of the bound.
func WithMaxBodySize(n int64) Option {
	return func(cfg *config) error {
		if n < 1 {
			return fmt.Errorf("shards: max body size %d: must be at least 1", n)
		}
		cfg.maxBody = n
		return nil
	}
}

// StopInOrder is Serve's stop, for its tests.
var StopInOrder = stopInOrder
