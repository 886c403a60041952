package plugin

import "fmt"

// Format describes the Plugin under every verb (and so in slog) by its
// attached shards, never their sessions, which hold the bot token.
func (p *Plugin) Format(f fmt.State, _ rune) {
	if p == nil || p.firstReady == nil {
		fmt.Fprint(f, "plugin.Plugin(not made by plugin.New)")
		return
	}
	p.mu.Lock()
	ids := make([]int, len(p.sessions))
	for i, s := range p.sessions {
		ids[i] = s.ShardID
	}
	p.mu.Unlock()
	fmt.Fprintf(f, "plugin.Plugin{shards attached: %v, webhooks: %t}", ids, p.hook != nil)
}
