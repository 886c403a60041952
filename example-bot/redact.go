package main

import (
	"fmt"
	"log/slog"
)

// redacted stands in for a secret in every printed form of the configuration.
const redacted = "[redacted]"

// shownConfig is config without its methods, so that printing it does not
// recurse into Format.
type shownConfig config

// redactedCopy returns c with its tokens replaced (a set token shows as
// [redacted], an unset one stays empty, so a missing token is still visible)
// and its URLs without user info, query and fragment, where a password or a key
// may sit.
func (c config) redactedCopy() shownConfig {
	r := shownConfig(c)
	r.TopggAPIURL, r.DiscordAPIURL = stripURLIfSet(r.TopggAPIURL), stripURLIfSet(r.DiscordAPIURL)
	if r.DiscordToken != "" {
		r.DiscordToken = redacted
	}
	if r.TopggToken != "" {
		r.TopggToken = redacted
	}
	return r
}

// Format prints the configuration with its tokens redacted, for every verb
// and flag (%v, %+v, %#v, %s, %q...): the tokens must not reach a log or a
// panic message by a careless Printf.
func (c config) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), c.redactedCopy())
}

// LogValue shows the configuration in slog with its tokens redacted.
func (c config) LogValue() slog.Value {
	r := c.redactedCopy()
	return slog.GroupValue(
		slog.String("DiscordToken", r.DiscordToken), slog.String("TopggToken", r.TopggToken),
		slog.String("TopggAPIURL", r.TopggAPIURL), slog.String("DiscordAPIURL", r.DiscordAPIURL),
		slog.String("RewardGuildID", r.RewardGuildID), slog.String("RewardRoleID", r.RewardRoleID),
		slog.Int("ShardCount", r.ShardCount), slog.String("LogLevel", r.LogLevel), slog.String("LogFormat", r.LogFormat),
		slog.Any("Plugin", r.Plugin),
	)
}

func stripURLIfSet(raw string) string {
	if raw == "" {
		return ""
	}
	return stripURL(raw)
}
