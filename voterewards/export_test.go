package voterewards

import (
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
)

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

// MemoryStore is NewMemoryStore's type, for the tests that wrap it.
type MemoryStore = memoryStore

// NewMemory returns NewMemoryStore's store as its type.
func NewMemory() *MemoryStore { return NewMemoryStore().(*memoryStore) }

// newVote makes a history vote of v, its times in UTC without monotonic
// readings, as sanitize leaves them.
func newVote(v topgg.Vote) Vote {
	v.CreatedAt = v.CreatedAt.UTC().Round(0)
	v.ExpiresAt = v.ExpiresAt.UTC().Round(0)
	return Vote{Vote: v, Origin: OriginHistory}
}
