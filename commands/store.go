package commands

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// HashStore keeps the fingerprint of the last published commands. A Syncer
// calls it one call at a time; one shared between Syncers must be safe for
// concurrent use.
type HashStore interface {
	// LoadHash returns the saved fingerprint, or "" when none was saved.
	LoadHash(ctx context.Context) (string, error)
	// SaveHash replaces the saved fingerprint.
	SaveHash(ctx context.Context, hash string) error
}

var (
	_ HashStore = (*memoryHashStore)(nil)
	_ HashStore = (*fileHashStore)(nil)
)

// memoryHashStore, Config.Store's default, keeps the fingerprint in memory.
// The zero value is ready; safe for concurrent use.
type memoryHashStore struct {
	mu   sync.Mutex
	hash string
}

// LoadHash returns the saved fingerprint, or "". It fails only when ctx is
// done, or on a nil store.
func (m *memoryHashStore) LoadHash(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if m == nil {
		return "", errNilMemoryStore
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hash, nil
}

// SaveHash replaces the fingerprint; it fails only when ctx is done or nil.
func (m *memoryHashStore) SaveHash(ctx context.Context, hash string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m == nil {
		return errNilMemoryStore
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hash = hash
	return nil
}

var errNilMemoryStore = fmt.Errorf("%w (the in-memory HashStore)", errNilStore)

// maxHashFile bounds what LoadHash reads: a fingerprint is 64 hex digits.
const maxHashFile = 256

// fileHashStore is the HashStore of NewFileHashStore.
type fileHashStore struct {
	path string
	mu   sync.Mutex
}

// NewFileHashStore returns a store keeping the fingerprint in the file at
// path, created with its directory on save; writes are atomic. Safe for
// concurrent use in one process; two processes must not share a path. An
// empty path's store fails with [topgg.ErrNotConfigured].
func NewFileHashStore(path string) HashStore {
	return &fileHashStore{path: path}
}

// LoadHash returns the file's fingerprint, or "" when there is no file; a
// file not holding one is an error.
func (f *fileHashStore) LoadHash(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if f == nil || f.path == "" {
		return "", errNoPath
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	file, err := os.Open(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("commands: reading hash: %w", err)
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxHashFile+1))
	if err != nil {
		return "", fmt.Errorf("commands: reading hash: %w", err)
	}
	h := strings.TrimSpace(string(b))
	if !validHash(h) {
		return "", fmt.Errorf("commands: hash file %s does not hold a sha256 hex digest", f.path)
	}
	return h, nil
}

// SaveHash writes hash to the file atomically.
func (f *fileHashStore) SaveHash(ctx context.Context, hash string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f == nil || f.path == "" {
		return errNoPath
	}
	if !validHash(hash) {
		return fmt.Errorf("commands: SaveHash: %q is not a sha256 hex digest", hash)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := writeAtomic(f.path, []byte(hash+"\n")); err != nil {
		return fmt.Errorf("commands: saving hash: %w", err)
	}
	return nil
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Durable once the directory is synced, where the platform can.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
