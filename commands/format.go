package commands

import (
	"fmt"
	"io"
	"log/slog"
)

// String describes the JobConfig, never its Session, which holds the token.
func (cfg JobConfig) String() string {
	session := "none"
	if cfg.Session != nil {
		session = fmt.Sprintf("shard %d", cfg.Session.ShardID)
	}
	return fmt.Sprintf("commands.JobConfig{commands: %d, session: %s, ready: %t, interval: %s}",
		len(cfg.Commands), session, cfg.Ready != nil, cfg.Interval)
}

// Format prints the JobConfig as String does, under every verb (%#v too).
func (cfg JobConfig) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, cfg.String()) }

// String describes the Job by its JobConfig, without its Session.
func (j *Job) String() string {
	if j == nil || j.syncer == nil {
		return "commands.Job(not made by commands.NewJob)"
	}
	return "commands.Job{" + j.cfg.String() + "}"
}

// Format prints the Job as String does, under every verb (%#v too).
func (j *Job) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, j.String()) }

// LogValue makes slog print the JobConfig as String does.
func (cfg JobConfig) LogValue() slog.Value { return slog.StringValue(cfg.String()) }

// LogValue makes slog print the Job as String does.
func (j *Job) LogValue() slog.Value { return slog.StringValue(j.String()) }
