package fleet

import (
	"fmt"
	"strings"
)

// keyPrefix is the first part of every Redis key and channel the fleet uses.
const keyPrefix = "topgg:"

// Key returns the Redis key named name in bot's key space:
// "topgg:{bot}:name". Every key of one bot carries the same hash tag {bot},
// so that on Redis Cluster they live in one slot and a Lua script (the fence,
// the vote store) may touch several of them atomically. Other packages that
// keep fleet state in Redis build their keys with Key so that a fenced script
// can reach them.
func Key(bot, name string) string { return keyPrefix + "{" + bot + "}:" + name }

// checkBot validates a bot name used in keys.
func checkBot(bot string) error {
	if bot == "" || strings.ContainsAny(bot, "{} \t\r\n") {
		return fmt.Errorf("%w: bot name %q (want a non-empty name without braces or spaces, e.g. the application id)", ErrBadConfig, bot)
	}
	return nil
}
