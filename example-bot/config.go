package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/dblkit/go-topgg/internal/baseurl"
	"github.com/dblkit/go-topgg/internal/redact"
	"github.com/dblkit/go-topgg/internal/snowflake"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
)

// config is the bot's whole configuration, read from the environment. Its
// secrets print as [redacted] (see secret).
type config struct {
	DiscordToken  secret    `env:"DISCORD_TOKEN, required"`
	TopggToken    secret    `env:"TOPGG_TOKEN, required"`
	TopggAPIURL   string    `env:"TOPGG_API_URL, default=https://top.gg/api"`
	DiscordAPIURL string    `env:"DISCORD_API_URL, default=https://discord.com/api/v9"`
	RewardGuildID discordID `env:"REWARD_GUILD_ID"`
	RewardRoleID  discordID `env:"REWARD_ROLE_ID"`
	ShardCount    int       `env:"SHARD_COUNT, default=1"`
	// Fleet mode (fleet.go): one process of several sharing Redis.
	RedisURL    secret        `env:"REDIS_URL"`    // may hold a password
	DatabaseURL secret        `env:"DATABASE_URL"` // points.go
	ShardIDs    shardIDs      `env:"SHARD_IDS"`
	FleetLease  time.Duration `env:"TOPGG_FLEET_LEASE, default=15s"`
	LogLevel    string        `env:"LOG_LEVEL, default=info"`
	LogFormat   string        `env:"LOG_FORMAT, default=text"`
	MetricsAddr string        `env:"METRICS_ADDR"` // metrics.go

	Plugin plugin.Config
}

// loadConfig reads and checks the configuration, touching neither the network
// nor the disk; errors name the variable.
func loadConfig(ctx context.Context, l envconfig.Lookuper) (config, error) {
	var c config
	if err := plugin.LoadEnv(ctx, &c, l); err != nil { // it validates c.Plugin
		return config{}, err
	}
	for _, check := range []func() error{c.validateClient, c.validateFleet, c.validateRest} {
		if err := check(); err != nil {
			return config{}, err
		}
	}
	return c, nil
}

// badVariable reports a problem with the environment variable v.
func badVariable(v, problem string) error {
	return &plugin.ConfigError{Variable: v, Problem: problem}
}

// validateClient checks the tokens and base URLs, and the plugin's interval
// floors, which depend on the client (none for a fake on this machine).
func (c config) validateClient() error {
	// The libraries are the authorities on their tokens and URLs, and their
	// errors quote neither. The tokens go first, alone, to blame the right variable.
	if _, err := shards.New(c.DiscordToken.Reveal(), 1); err != nil {
		return badVariable("DISCORD_TOKEN", strings.TrimPrefix(err.Error(), "shards: "))
	}
	if _, err := topgg.New(c.TopggToken.Reveal()); err != nil {
		return badVariable("TOPGG_TOKEN", err.Error())
	}
	client, err := topgg.New(c.TopggToken.Reveal(), topgg.WithBaseURL(c.TopggAPIURL))
	if err != nil {
		return badVariable("TOPGG_API_URL", err.Error())
	}
	if _, err := baseurl.Parse(c.DiscordAPIURL, false); err != nil { // the Discord token is sent to it
		return badVariable("DISCORD_API_URL", err.Error())
	}
	err = c.Plugin.ValidateFor(client)
	var ce *plugin.ConfigError // every field of c.Plugin comes from its variable: name it
	if errors.As(err, &ce) && ce.Variable == "" {
		f, _ := reflect.TypeFor[plugin.Config]().FieldByName(strings.TrimPrefix(ce.Field, "Config."))
		ce.Variable, _, _ = strings.Cut(f.Tag.Get("env"), ",")
	}
	return err
}

// validateRest checks the reward role, the log settings and what the bot
// listens on (a typo stops the bot at once, not once it is online).
func (c config) validateRest() error {
	if c.DatabaseURL.Reveal() != "" {
		if err := checkDatabaseURL(c.DatabaseURL.Reveal()); err != nil {
			return err
		}
	}
	if (c.RewardGuildID == "") != (c.RewardRoleID == "") {
		return badVariable("REWARD_ROLE_ID", "REWARD_GUILD_ID and REWARD_ROLE_ID must be set together")
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return badVariable("LOG_LEVEL", err.Error())
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return badVariable("LOG_FORMAT", fmt.Sprintf("%q is not text or json", c.LogFormat))
	}
	return errors.Join(checkAddr("METRICS_ADDR", c.MetricsAddr), checkAddr("TOPGG_WEBHOOK_ADDR", c.Plugin.WebhookAddr))
}

// discordID is a Discord id read from a variable (REWARD_GUILD_ID, REWARD_ROLE_ID).
type discordID string

// EnvDecode refuses what is not a Discord id.
func (d *discordID) EnvDecode(v string) error {
	if !snowflake.Valid(v) {
		return errors.New("not a Discord id (a decimal number below 2^64, without a leading zero)")
	}
	*d = discordID(v)
	return nil
}

// checkAddr checks an address variable: empty, or host:port or :port with a
// port from 0 to 65535 (0 picks a free one, which the log says).
func checkAddr(variable, addr string) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || strconv.FormatUint(n, 10) != port {
		return badVariable(variable, fmt.Sprintf("%q is not host:port or :port with a port from 0 to 65535, such as :8080", addr))
	}
	if strings.ContainsFunc(host, func(r rune) bool { return r <= ' ' || r == '/' }) {
		return badVariable(variable, fmt.Sprintf("%q: the host holds white space or a slash", addr))
	}
	return nil
}

// checkStateDir makes sure the state directory can be created and written when
// a job keeps state there, so that a bad TOPGG_STATE_DIR stops the bot before
// any request rather than after it went online.
func checkStateDir(c config) error {
	polling := c.Plugin.VotePollInterval == nil || *c.Plugin.VotePollInterval > 0
	syncing := c.Plugin.SyncCommands == nil || *c.Plugin.SyncCommands
	if (!polling && !syncing) || c.fleetMode() { // a fleet keeps its state in Redis
		return nil
	}
	dir := cmp.Or(c.Plugin.StateDir, plugin.DefaultStateDir)
	err := os.MkdirAll(dir, 0o700)
	if err != nil {
		return badVariable("TOPGG_STATE_DIR", fmt.Sprintf("cannot create %q: %v", dir, pathErr(err)))
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err == nil {
		err = errors.Join(f.Close(), os.Remove(f.Name()))
	}
	if err != nil {
		return badVariable("TOPGG_STATE_DIR", fmt.Sprintf("cannot write in %q: %v", dir, pathErr(err)))
	}
	return nil
}

// pathErr drops the path a *fs.PathError repeats.
func pathErr(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	switch strings.ToLower(s) {
	case "debug", "info", "warn", "error":
		return l, l.UnmarshalText([]byte(s))
	}
	return l, fmt.Errorf("%q is not debug, info, warn or error", s)
}

// newLogger makes the bot's logger; level and format were checked by the config.
func newLogger(level, format string, w io.Writer) *slog.Logger {
	lvl, _ := parseLevel(level)
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl}))
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl}))
}

// secret holds a token or a URL with a password. It prints as [redacted] with
// every fmt verb, in slog and in encoders (empty when unset). Its value sits
// behind a pointer, so that fmt's reflection into an unexported field, which
// calls no method, shows an address.
type secret struct{ p *string }

func newSecret(s string) secret { return secret{&s} }

// Reveal returns the value, for the one call that uses it.
func (s secret) Reveal() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

// EnvDecode lets LoadEnv read the value from its variable.
func (s *secret) EnvDecode(v string) error { s.p = &v; return nil }

// Format prints [redacted], or nothing when unset, whatever the verb.
func (s secret) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), s.LogValue().String())
}

// LogValue shows [redacted] in slog, or an empty string when unset.
func (s secret) LogValue() slog.Value {
	if s.p == nil {
		return slog.StringValue("")
	}
	return slog.StringValue(redact.Mark)
}

// MarshalText keeps the value out of encoders that skip Format (JSON, say).
func (s secret) MarshalText() ([]byte, error) { return []byte(s.LogValue().String()), nil }

// shownConfig is config without its methods, so that printing it does not
// recurse into Format.
type shownConfig config

// Format prints the configuration with its secrets redacted, and its URLs
// without password, query and fragment, for every verb and flag: they must
// not reach a log or a panic message by a careless Printf.
func (c config) Format(f fmt.State, verb rune) {
	r := shownConfig(c)
	r.TopggAPIURL, r.DiscordAPIURL = redact.RawURL(r.TopggAPIURL), redact.RawURL(r.DiscordAPIURL) // "" stays ""
	fmt.Fprintf(f, fmt.FormatString(f, verb), r)
}

// LogValue shows the configuration in slog as Format does.
func (c config) LogValue() slog.Value { return slog.StringValue(fmt.Sprintf("%+v", c)) }
