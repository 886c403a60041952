package commands

import (
	"fmt"
	"log/slog"
)

// Format prints the Config under every verb (%#v too) without its Session,
// which holds the token.
func (cfg Config) Format(f fmt.State, _ rune) {
	session := "none"
	if cfg.Session != nil {
		session = fmt.Sprintf("shard %d", cfg.Session.ShardID)
	}
	fmt.Fprintf(f, "commands.Config{store: %t, commands: %d, session: %s, ready: %t, interval: %s}",
		cfg.Store != nil, len(cfg.Commands), session, cfg.Ready != nil, cfg.Interval)
}

// LogValue makes slog print the Config as Format does.
func (cfg Config) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(cfg)) }
