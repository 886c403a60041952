package plugin

import (
	"fmt"
	"io"
	"log/slog"
)

// String describes the Plugin by its attached shards, never their sessions,
// which hold the bot token.
func (p *Plugin) String() string {
	if p == nil || p.firstReady == nil {
		return "plugin.Plugin(not made by plugin.New)"
	}
	p.mu.Lock()
	ids := make([]int, len(p.sessions))
	for i, s := range p.sessions {
		ids[i] = s.ShardID
	}
	p.mu.Unlock()
	return fmt.Sprintf("plugin.Plugin{shards attached: %v, webhooks: %t}", ids, p.hook != nil)
}

// Format prints the Plugin as String does, under every verb (%#v too).
func (p *Plugin) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, p.String()) }

// LogValue makes slog print the Plugin as String does.
func (p *Plugin) LogValue() slog.Value { return slog.StringValue(p.String()) }
