package autopost

import "github.com/dblkit/go-topgg/internal/clock"

// WithClock returns cfg with its waits timed by c: tests advance a fake
// clock instead of sleeping.
func WithClock(cfg Config, c clock.Clock) Config {
	cfg.clock = c
	return cfg
}

// Attached is how many sessions are attached to c, for the external tests.
func Attached(c *Counter) int { return int(c.t.attached.Load()) }

// CounterOf returns the Poster's own Counter, nil when it posts from another Source.
func CounterOf(p *Poster) *Counter { return p.counter }

// Errors the external tests check with errors.Is.
var (
	ErrAttachedTwice  = errAttachedTwice
	ErrNoGuildsIntent = errNoGuildsIntent
	ErrNoCounter      = errNoCounter
)
