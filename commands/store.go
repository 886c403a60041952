package commands

import (
	"context"
	"sync/atomic"
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
// The zero value is ready; safe for concurrent use. It fails only when ctx is
// done.
type memoryHashStore struct{ hash atomic.Pointer[string] }

func (m *memoryHashStore) LoadHash(ctx context.Context) (string, error) {
	if p := m.hash.Load(); p != nil && ctx.Err() == nil {
		return *p, nil
	}
	return "", ctx.Err()
}

func (m *memoryHashStore) SaveHash(ctx context.Context, hash string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.hash.Store(&hash)
	return nil
}
