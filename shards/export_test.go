package shards

import (
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

var WithMaxBodySize = withMaxBodySize

// StopInOrder is Serve's stop, for its tests.
var StopInOrder = stopInOrder
