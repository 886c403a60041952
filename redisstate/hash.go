package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/commands"
)

var _ commands.HashStore = (*hashStore)(nil)

// hashStore is the store of [Fleet.HashStore] (see there what it promises).
type hashStore struct {
	lease *Lease
	key   string
}

// newHashStore returns the command hash store of the lease's bot, fenced by
// the lease's term. It does not contact Redis.
func newHashStore(lease *Lease) *hashStore {
	return &hashStore{lease: lease, key: Key(lease.bot, "commands:hash")}
}

// LoadHash returns the saved fingerprint, or "" when none was saved.
func (h *hashStore) LoadHash(ctx context.Context) (string, error) {
	v, err := h.lease.rdb.Get(ctx, h.key).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("fleet: load command hash: %w", err)
	}
	return v, nil
}

// SaveHash replaces the saved fingerprint if this process holds the newest
// leader token; otherwise it returns an error wrapping [ErrFenced] (a newer
// leader exists) or [ErrNoFence] (this process does not lead).
func (h *hashStore) SaveHash(ctx context.Context, hash string) error {
	f := h.lease.Fence(h.lease.State().Token)
	if err := f.Set(ctx, h.lease.rdb, h.key, hash, 0); err != nil {
		return fmt.Errorf("fleet: save command hash: %w", err)
	}
	return nil
}
