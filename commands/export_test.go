package commands

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/clock"
)

// WithJobClock returns cfg with the Job's waits timed by c.
func WithJobClock(cfg JobConfig, c clock.Clock) JobConfig {
	cfg.clock = c
	return cfg
}

// MemoryHashStore is the default, in-memory HashStore, for the store tests.
type MemoryHashStore = memoryHashStore

// NewMemoryHashStore returns an empty in-memory store.
func NewMemoryHashStore() *MemoryHashStore { return &memoryHashStore{} }

const DefaultJobInterval = defaultJobInterval

var ErrNotReady = errNotReady

// SyncFromDiscord is the one-shot sync a Job without Commands runs.
func (s *Syncer) SyncFromDiscord(ctx context.Context, session *discordgo.Session) (Result, error) {
	return failed(s.sync(ctx, nil, session, nil))
}
