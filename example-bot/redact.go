package main

import (
	"fmt"
	"log/slog"

	"github.com/dblkit/go-topgg/internal/redact"
)

// secret holds a token. It prints as [redacted] with every fmt verb and in slog
// (empty when unset). Its value sits behind a pointer, so that fmt's
// reflection into an unexported field, which calls no method, shows an address.
type secret struct{ p *string }

func newSecret(s string) secret { return secret{&s} }

// Reveal returns the token, for the one call that sends it.
func (s secret) Reveal() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

// EnvDecode lets LoadEnv read the token from its variable.
func (s *secret) EnvDecode(v string) error {
	s.p = &v
	return nil
}

// Format prints [redacted], or nothing when unset, whatever the verb.
func (s secret) Format(f fmt.State, verb rune) {
	if s.p != nil {
		fmt.Fprintf(f, fmt.FormatString(f, verb), redact.Mark)
	}
}

// LogValue shows [redacted] in slog, or an empty string when unset.
func (s secret) LogValue() slog.Value {
	if s.p == nil {
		return slog.StringValue("")
	}
	return slog.StringValue(redact.Mark)
}

// MarshalText keeps the token out of encoders that skip Format (JSON, say).
func (s secret) MarshalText() ([]byte, error) { return []byte(s.LogValue().String()), nil }

// shownConfig is config without its methods, so that printing it does not
// recurse into Format.
type shownConfig config

// shown returns c with its URLs shown without password, query and fragment,
// where a password or a key may sit (the tokens redact themselves).
func (c config) shown() shownConfig {
	r := shownConfig(c)
	r.TopggAPIURL, r.DiscordAPIURL = redact.RawURL(r.TopggAPIURL), redact.RawURL(r.DiscordAPIURL) // "" stays ""
	return r
}

// Format prints the configuration with its secrets redacted, for every verb and
// flag: they must not reach a log or a panic message by a careless Printf.
func (c config) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), c.shown())
}

// LogValue shows the configuration in slog with its secrets redacted.
func (c config) LogValue() slog.Value {
	r := c.shown()
	return slog.GroupValue(
		slog.Any("DiscordToken", r.DiscordToken), slog.Any("TopggToken", r.TopggToken),
		slog.String("TopggAPIURL", r.TopggAPIURL), slog.String("DiscordAPIURL", r.DiscordAPIURL),
		slog.String("RewardGuildID", r.RewardGuildID), slog.String("RewardRoleID", r.RewardRoleID),
		slog.Int("ShardCount", r.ShardCount), slog.Any("RedisURL", r.RedisURL), slog.String("ShardIDs", r.ShardIDs.String()),
		slog.Duration("FleetLease", r.FleetLease), slog.String("LogLevel", r.LogLevel), slog.String("LogFormat", r.LogFormat),
		slog.Any("Plugin", r.Plugin),
	)
}
