package commands

import "github.com/dblkit/go-topgg/internal/clock"

// WithJobClock returns cfg with the Job's waits timed by c.
func WithJobClock(cfg JobConfig, c clock.Clock) JobConfig {
	cfg.clock = c
	return cfg
}
