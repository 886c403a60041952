package fleet

import "github.com/dblkit/go-topgg/internal/fence"

// Fence is a leader term's right to write shared state: the bot's token
// counter key and the term's token. A fenced write is a Lua script that
// checks, inside Redis and atomically with the write, that the counter still
// equals the token, and refuses the write ([ErrFenced]) otherwise: a leader
// paused past its lease and replaced changes nothing. Keys a fenced script
// writes are built with [Key] for the same bot (one Cluster slot). The zero
// Fence refuses every write with [ErrNoFence]; a Fence is a value.
type Fence = fence.Fence

// FencedScript is a Lua script that runs only while its caller's token is the
// newest. Make it with [NewFencedScript]; safe for concurrent use.
type FencedScript = fence.Script

// NewFencedScript returns a fenced script running body. Inside body, KEYS and
// ARGV are exactly the keys and args given to Run.
func NewFencedScript(body string) *FencedScript { return fence.NewScript(body) }

// Key returns the Redis key named name in bot's key space:
// "topgg:{bot}:name", one hash slot per bot on Redis Cluster, so that a
// fenced script may touch several keys atomically.
func Key(bot, name string) string { return fence.Key(bot, name) }
