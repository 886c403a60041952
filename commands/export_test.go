package commands

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/clock"
)

// WithClock returns cfg with Run's waits timed by c.
func WithClock(cfg Config, c clock.Clock) Config {
	cfg.clock = c
	return cfg
}

// MemoryHashStore is the default, in-memory HashStore, for the store tests.
type MemoryHashStore = memoryHashStore

// NewMemoryHashStore returns an empty in-memory store.
func NewMemoryHashStore() *MemoryHashStore { return &memoryHashStore{} }

const DefaultInterval = defaultInterval

var ErrNotReady = errNotReady

// SyncFromDiscord is the one-shot sync Run without Commands runs.
func (s *Syncer) SyncFromDiscord(ctx context.Context, session *discordgo.Session) (Result, error) {
	return failed(s.sync(ctx, nil, session, nil))
}
