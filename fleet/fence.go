package fleet

import "github.com/dblkit/go-topgg/internal/fence"

// Fence is a leader term's right to write shared state: a fenced write fails
// with [ErrFenced] once a newer term exists, and with [ErrNoFence] on the zero
// Fence. Its keys are built with [Key] for the same bot.
type Fence = fence.Fence

// FencedScript is a Lua script that runs only while its caller's token is the
// newest. Make it with [NewFencedScript]; safe for concurrent use.
type FencedScript = fence.Script

// NewFencedScript returns a fenced script running body. Inside body, KEYS and
// ARGV are exactly the keys and args given to Run.
func NewFencedScript(body string) *FencedScript { return fence.NewScript(body) }

// Key returns the Redis key name in bot's key space, "topgg:{bot}:name": one
// Cluster hash slot per bot.
func Key(bot, name string) string { return fence.Key(bot, name) }
