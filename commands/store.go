package commands

import (
	"context"
	"sync"
)

// HashStore keeps the fingerprint of the last published commands; each
// state package's State is one. A Syncer calls it one call at a time; one
// shared between Syncers must be safe for concurrent use.
type HashStore interface {
	// LoadHash returns the saved fingerprint, or "" when none was saved.
	LoadHash(ctx context.Context) (string, error)
	// SaveHash replaces the saved fingerprint.
	SaveHash(ctx context.Context, hash string) error
}

var _ HashStore = (*memoryHashStore)(nil)

// memoryHashStore, Config.Store's default, keeps the fingerprint in memory.
// The zero value is ready; safe for concurrent use.
type memoryHashStore struct {
	mu   sync.Mutex
	hash string
}

// LoadHash returns the saved fingerprint, or ""; it fails only when ctx is done.
func (m *memoryHashStore) LoadHash(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hash, nil
}

// SaveHash replaces the fingerprint; it fails only when ctx is done.
func (m *memoryHashStore) SaveHash(ctx context.Context, hash string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hash = hash
	return nil
}
