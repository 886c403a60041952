package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Reminders is the fleet's store of vote reminder opt-ins (a
// voterperks.ReminderStore): one Redis hash, Key(bot, "hash:reminders"), whose
// fields are the opted-in users and whose values are the key of the last
// vote each was reminded of. Per user it keeps one field, whatever the
// number of votes. The opt-ins of the example bot's earlier Redis set,
// Key(bot, "set:reminders"), are read as opted in with no reminder sent, and
// moved to the hash on their next change. Make it with [Fleet.Reminders];
// safe for concurrent use.
type Reminders struct {
	lease    *Lease
	key, old string
}

// Reminders returns the fleet's reminder opt-ins. Any process sets a choice
// (unfenced: the interaction that asks may reach any process); the leader
// records the reminders it sent, fenced by its term ([ErrFenced],
// [ErrNoFence]). Nil on a Fleet not made by [New] or [Open].
func (f *Fleet) Reminders() *Reminders {
	if f == nil || f.lease == nil {
		return nil
	}
	return &Reminders{lease: f.lease, key: Key(f.lease.bot, "hash:reminders"), old: Key(f.lease.bot, "set:reminders")}
}

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
var reminded = NewFencedScript(`
local on = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1
if on then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('SREM', KEYS[2], ARGV[1])
end
return 1
`)

// SetReminder records userID's choice, in one atomic script.
func (r *Reminders) SetReminder(ctx context.Context, userID string, on bool) error {
	if r == nil || r.lease == nil {
		return errNotMade
	}
	flag := "0"
	if on {
		flag = "1"
	}
	if err := setReminder.Run(ctx, r.lease.rdb, []string{r.key, r.old}, userID, flag).Err(); err != nil {
		return fmt.Errorf("fleet: set reminder: %w", err)
	}
	return nil
}

// Reminder reads userID's choice and last reminded vote (one round trip).
func (r *Reminders) Reminder(ctx context.Context, userID string) (on bool, last string, err error) {
	if r == nil || r.lease == nil {
		return false, "", errNotMade
	}
	var get *redis.StringCmd
	var old *redis.BoolCmd
	_, err = r.lease.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.HGet(ctx, r.key, userID)
		old = p.SIsMember(ctx, r.old, userID)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, "", fmt.Errorf("fleet: read reminder: %w", err)
	}
	if last, err := get.Result(); err == nil {
		return true, last, nil
	}
	return old.Val(), "", nil
}

// Reminded records, fenced by this process's current term, that userID was
// reminded of vote key; it fails with [ErrFenced] once a newer leader exists
// and [ErrNoFence] while this process does not lead.
func (r *Reminders) Reminded(ctx context.Context, userID, key string) error {
	if r == nil || r.lease == nil {
		return errNotMade
	}
	f := r.lease.Fence(r.lease.State().Token)
	if _, err := reminded.Run(ctx, r.lease.rdb, f, []string{r.key, r.old}, userID, key); err != nil {
		return fmt.Errorf("fleet: record reminder: %w", err)
	}
	return nil
}
