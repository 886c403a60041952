package redisstate

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// LoadHash implements [voterewards.State]: one GET, unfenced.
func (s *State) LoadHash(ctx context.Context) (string, error) {
	v, err := s.rdb.Get(ctx, s.hash).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("redisstate: load command hash: %w", err)
	}
	return v, nil
}

// SaveHash implements [voterewards.State]; fenced.
func (s *State) SaveHash(ctx context.Context, hash string) error {
	if err := s.fence().Set(ctx, s.rdb, s.hash, hash, 0); err != nil {
		return fmt.Errorf("redisstate: save command hash: %w", err)
	}
	return nil
}
