package autopost

import "fmt"

// Format prints the Counter by its shard count under every verb (%#v too),
// never its sessions, which hold the bot token.
func (c *Counter) Format(f fmt.State, _ rune) {
	if c == nil {
		fmt.Fprint(f, "autopost.Counter(nil)")
		return
	}
	c.mu.Lock()
	n := len(c.sessions)
	c.mu.Unlock()
	fmt.Fprintf(f, "autopost.Counter{shard count: %d, sessions attached: %d}", c.shardCount, n)
}
