package commands

import (
	"fmt"
	"log/slog"
)

// Format prints the JobConfig under every verb (%#v too) without its
// Session, which holds the token.
func (cfg JobConfig) Format(f fmt.State, _ rune) {
	session := "none"
	if cfg.Session != nil {
		session = fmt.Sprintf("shard %d", cfg.Session.ShardID)
	}
	fmt.Fprintf(f, "commands.JobConfig{commands: %d, session: %s, ready: %t, interval: %s}",
		len(cfg.Commands), session, cfg.Ready != nil, cfg.Interval)
}

// LogValue makes slog print the JobConfig as Format does.
func (cfg JobConfig) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(cfg)) }

// Format prints the Job by its JobConfig, without its Session, under every verb.
func (j *Job) Format(f fmt.State, _ rune) {
	if j == nil || j.syncer == nil {
		fmt.Fprint(f, "commands.Job(not made by commands.NewJob)")
		return
	}
	fmt.Fprintf(f, "commands.Job{%v}", j.cfg)
}
