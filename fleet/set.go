package fleet

import (
	"context"
	"fmt"
	"strings"
)

// Set is a set of strings in Redis that every process of the fleet shares:
// user preferences such as the users who asked for a vote reminder, which one
// process records (the one that got the interaction) and another reads (the
// leader, at expiry). Its writes are not fenced: any process may make them,
// leader or not. Safe for concurrent use.
type Set struct {
	f   *Fleet
	key string
}

// Set returns the fleet's set called name (letters, digits, '_' and '-'),
// which lives at Key(bot, "set:"+name). It does not contact Redis.
func (f *Fleet) Set(name string) (*Set, error) {
	if f == nil || f.rdb == nil {
		return nil, errNotMade
	}
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
		return nil, fmt.Errorf("%w: set name %q (want letters, digits, _ and -)", ErrBadConfig, name)
	}
	return &Set{f: f, key: Key(f.cfg.Bot, "set:"+name)}, nil
}

// Add puts member in the set; it returns once Redis has it.
func (s *Set) Add(ctx context.Context, member string) error {
	if err := s.f.rdb.SAdd(ctx, s.key, member).Err(); err != nil {
		return fmt.Errorf("fleet: set add: %w", err)
	}
	return nil
}

// Remove takes member out of the set.
func (s *Set) Remove(ctx context.Context, member string) error {
	if err := s.f.rdb.SRem(ctx, s.key, member).Err(); err != nil {
		return fmt.Errorf("fleet: set remove: %w", err)
	}
	return nil
}

// Contains reports whether member is in the set.
func (s *Set) Contains(ctx context.Context, member string) (bool, error) {
	ok, err := s.f.rdb.SIsMember(ctx, s.key, member).Result()
	if err != nil {
		return false, fmt.Errorf("fleet: set lookup: %w", err)
	}
	return ok, nil
}
