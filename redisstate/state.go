package redisstate

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/fence"
	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

var (
	_ voterewards.State = (*State)(nil)
	_ voterewards.Feed  = (*State)(nil)

	errNilClient = fmt.Errorf("redisstate: %w (Redis client)", topgg.ErrNilArgument)
	errNilFunc   = fmt.Errorf("redisstate: %w (function)", topgg.ErrNilArgument)
	// errFenceGiven: no caller may swap the term the writes are checked by.
	errFenceGiven = errors.New("redisstate: UseFence called twice (the state keeps the first fence)")
)

// State is a bot's state in Redis. Make it with [New]; safe for concurrent use.
type State struct {
	rdb    redis.UniversalClient
	bot    string
	fences func(token int64) fence.Fence
	term   atomic.Pointer[voterewards.Fence] // UseFence's; nil before

	channel, seen, voters, order, meta, pending, expiries    string
	checkpoint, ledger, board, hash, reminders, oldReminders string
}

// New returns the state of bot on rdb, which the caller keeps and closes, without
// contacting Redis. Errors: [topgg.ErrNilArgument], a *[topgg.ConfigError] for bot.
func New(rdb redis.UniversalClient, bot string) (*State, error) {
	if typednil.Is(rdb) {
		return nil, errNilClient
	}
	fences, err := fence.For(bot)
	if err != nil {
		return nil, err
	}
	k := func(name string) string { return fence.Key(bot, "votes:"+name) }
	return &State{
		rdb: rdb, bot: bot, fences: fences, channel: k("added"),
		seen: k("seen"), voters: k("voters"), order: k("order"), meta: k("meta"),
		pending: k("pending"), expiries: k("expiries"), checkpoint: k("checkpoint"),
		ledger: k("ledger"), board: k("board"), hash: fence.Key(bot, "commands:hash"),
		reminders: fence.Key(bot, "hash:reminders"), oldReminders: fence.Key(bot, "set:reminders"),
	}, nil
}

// UseFence implements [voterewards.State]: each later leader write is fenced
// by the term whose token f returns then. A nil f wraps
// [voterewards.ErrNeedsFence]; a second call is refused.
func (s *State) UseFence(f voterewards.Fence) error {
	if f == nil {
		return fmt.Errorf("redisstate: %w", voterewards.ErrNeedsFence)
	}
	if !s.term.CompareAndSwap(nil, &f) {
		return errFenceGiven
	}
	return nil
}

// fence is the fence of the term this process holds now (none before UseFence).
func (s *State) fence() fence.Fence {
	if f := s.term.Load(); f != nil {
		return s.fences((*f)())
	}
	return fence.Fence{}
}

// Format prints the State as "redisstate.State" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*State) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "redisstate.State") }
