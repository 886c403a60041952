package fleet

import "github.com/dblkit/go-topgg/internal/fence"

// Fence is a leader term's right to write shared state: a fenced write fails
// with [ErrFenced] once a newer term exists, and with [ErrNoFence] on the zero
// Fence. Its keys are built with [Key] for the same bot.
type Fence = fence.Fence

// Key returns the Redis key name in bot's key space, "topgg:{bot}:name": one
// Cluster hash slot per bot.
func Key(bot, name string) string { return fence.Key(bot, name) }
