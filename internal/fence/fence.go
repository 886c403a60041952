// Package fence is a fleet's fencing in Redis: the bot's key space, and
// scripts that write only while their term's token is the newest. Apart from
// fleet, so that a state in Redis links neither fleet's counts nor discordgo.
package fence

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/topgg"
)

// Errors, re-exported by fleet under the same names.
var (
	// ErrFenced means a newer leader token exists: the writer is no longer leader.
	ErrFenced = errors.New("fleet: write refused by the fence: a newer leader exists")
	// ErrNoFence means a fenced write was attempted with a zero Fence.
	ErrNoFence = errors.New("fleet: zero fence (no leader token)")

	errNilClient = fmt.Errorf("fleet: %w (Redis client)", topgg.ErrNilArgument)
)

// keyPrefix is the first part of every Redis key and channel of a fleet.
const keyPrefix = "topgg:"

// Key returns the Redis key name in bot's key space, "topgg:{bot}:name"; all
// of a bot's keys share one Redis Cluster slot.
func Key(bot, name string) string { return keyPrefix + "{" + bot + "}:" + name }

// CheckBot validates a bot name used in keys: a *[topgg.ConfigError] if refused.
func CheckBot(bot string) error {
	if bot == "" || strings.ContainsAny(bot, "{} \t\r\n") {
		return &topgg.ConfigError{Field: "bot", Problem: fmt.Sprintf("%q is refused (want a non-empty name without braces or spaces, e.g. the application id)", bot)}
	}
	return nil
}

// Fence is a leader term's right to write shared state. A fenced write
// ([Script], [Fence.Set]) is refused with [ErrFenced] once a newer term has
// begun, whatever the writer's clock believes; the zero Fence refuses every
// write with [ErrNoFence]. Keys written by a fenced script must be built with
// [Key] for the same bot. A Fence is a value.
type Fence struct {
	// A fenced script checks, atomically with its write, that the counter at
	// key still equals token; it moves only when a process wins the lease.
	key   string
	token int64
}

// Token returns the term's fencing token (0 for the zero Fence).
func (f Fence) Token() int64 { return f.token }

// For returns the fence of bot's term by its token; a bot [CheckBot] refuses
// is an error.
func For(bot string) (func(token int64) Fence, error) {
	if err := CheckBot(bot); err != nil {
		return nil, err
	}
	key := Key(bot, "fence")
	return func(token int64) Fence { return Fence{key: key, token: token} }, nil
}

// fencePrelude takes the fence key and token off the front of KEYS and ARGV
// and refuses the call unless the token is current. FENCED is a Redis error
// code, matched as the code, never as free text.
const fencePrelude = `local fence_key = table.remove(KEYS, 1)
local fence_token = table.remove(ARGV, 1)
if redis.call('GET', fence_key) ~= fence_token then
  return redis.error_reply('FENCED a newer leader token exists')
end
`

// Script is a Lua script that runs only while its caller's token is the
// newest. Make it with [NewScript]; safe for concurrent use.
type Script struct {
	script *redis.Script
}

// NewScript returns a fenced script running body with the KEYS and ARGV of Run.
func NewScript(body string) *Script {
	return &Script{script: redis.NewScript(fencePrelude + body)}
}

// Run runs the script if f's token is current and returns its reply. Errors
// wrap [ErrFenced] when a newer token exists, [ErrNoFence] for a zero Fence
// (without contacting Redis); redis.Nil when the script returned nil.
func (s *Script) Run(ctx context.Context, c redis.Scripter, f Fence, keys []string, args ...any) (any, error) {
	if typednil.Is(c) {
		return nil, errNilClient
	}
	if f.token == 0 {
		return nil, ErrNoFence
	}
	k := make([]string, 0, len(keys)+1)
	k = append(append(k, f.key), keys...)
	a := make([]any, 0, len(args)+1)
	a = append(append(a, f.token), args...)
	v, err := s.script.Run(ctx, c, k, a...).Result()
	if redis.HasErrorPrefix(err, "FENCED") {
		return nil, fmt.Errorf("%w (token %d)", ErrFenced, f.token)
	}
	return v, err
}

// fencedSet is SET key value [PX ms], fenced.
var fencedSet = NewScript(`
if tonumber(ARGV[2]) > 0 then
  return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return redis.call('SET', KEYS[1], ARGV[1])
`)

// Set writes key = value (expiring after ttl if ttl > 0) only if f's token is
// current, else it returns an error wrapping [ErrFenced].
func (f Fence) Set(ctx context.Context, c redis.Scripter, key, value string, ttl time.Duration) error {
	_, err := fencedSet.Run(ctx, c, f, []string{key}, value, ttl.Milliseconds())
	return err
}
