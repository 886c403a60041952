package voterewards

import "github.com/dblkit/go-topgg/internal/clock"

// WithClock returns cfg with its clock set to c: how the tests of this
// package inject a *clock.Fake.
func WithClock(cfg Config, c clock.Clock) Config {
	cfg.clock = c
	return cfg
}

// StoreFile is the name of the bbolt file OpenStore keeps in its directory,
// for the tests that damage it.
const StoreFile = storeFile

// Bounds of sanitize, for the hardening tests.
const (
	MaxClockSkew = maxClockSkew
	MaxWeight    = maxWeight
)
