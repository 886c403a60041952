package main

import (
	"io"
	"log/slog"
)

// newLogger makes the bot's logger; level and format were checked by the config.
func newLogger(level, format string, w io.Writer) *slog.Logger {
	lvl, _ := parseLevel(level)
	opts := &slog.HandlerOptions{Level: lvl}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
