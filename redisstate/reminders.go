package redisstate

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/fence"
)

// setReminder turns a user's reminders on (keeping their last reminded vote)
// or off, and drops them from the old set.
var setReminder = redis.NewScript(`
redis.call('SREM', KEYS[2], ARGV[1])
if ARGV[2] == '1' then
  redis.call('HSETNX', KEYS[1], ARGV[1], '')
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 1
`)

// reminded records the vote a user was last reminded of, if they still
// want reminders (in the hash, or the old set).
var reminded = fence.NewScript(`
local on = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1
if on then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('SREM', KEYS[2], ARGV[1])
end
return 1
`)

// SetReminder implements [voterewards.ReminderStore]: one unfenced script.
func (s *State) SetReminder(ctx context.Context, userID string, on bool) error {
	flag := "0"
	if on {
		flag = "1"
	}
	if err := setReminder.Run(ctx, s.rdb, []string{s.reminders, s.oldReminders}, userID, flag).Err(); err != nil {
		return fmt.Errorf("redisstate: set reminder: %w", err)
	}
	return nil
}

// Reminder implements [voterewards.ReminderStore]: one round trip.
func (s *State) Reminder(ctx context.Context, userID string) (on bool, last string, err error) {
	var get *redis.StringCmd
	var old *redis.BoolCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.HGet(ctx, s.reminders, userID)
		old = p.SIsMember(ctx, s.oldReminders, userID)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, "", fmt.Errorf("redisstate: read reminder: %w", err)
	}
	if last, err := get.Result(); err == nil {
		return true, last, nil
	}
	return old.Val(), "", nil
}

// Reminded implements [voterewards.ReminderStore]; fenced.
func (s *State) Reminded(ctx context.Context, userID, key string) error {
	if _, err := reminded.Run(ctx, s.rdb, s.fence(), []string{s.reminders, s.oldReminders}, userID, key); err != nil {
		return fmt.Errorf("redisstate: record reminder: %w", err)
	}
	return nil
}
