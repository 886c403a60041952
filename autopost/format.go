package autopost

import (
	"fmt"
	"io"
)

// String describes the Counter by its shard count, never its sessions, which
// hold the bot token.
func (c *Counter) String() string {
	if c == nil {
		return "autopost.Counter(nil)"
	}
	c.mu.Lock()
	n := len(c.sessions)
	c.mu.Unlock()
	return fmt.Sprintf("autopost.Counter{shard count: %d, sessions attached: %d}", c.shardCount, n)
}

// Format prints the Counter as String does, under every verb (%#v too).
func (c *Counter) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }
