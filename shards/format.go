package shards

import (
	"fmt"
	"io"
	"log/slog"
)

// String describes the Group by its shards, without its sessions: a
// discordgo.Session holds the bot token in clear, and fmt prints a pointer
// reached under a verb that does not fit it (%s, %q, %d, %x) field by field.
func (g *Group) String() string {
	if g == nil {
		return "shards.Group(nil)"
	}
	ids := make([]int, len(g.sessions))
	for i, s := range g.sessions {
		ids[i] = s.ShardID
	}
	return fmt.Sprintf("shards.Group{shard count: %d, shards: %v}", g.shardCount, ids)
}

// Format prints the Group without its sessions under every verb (%#v too).
func (g *Group) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, g.String()) }

// LogValue makes slog print the Group without its sessions.
func (g *Group) LogValue() slog.Value { return slog.StringValue(g.String()) }
