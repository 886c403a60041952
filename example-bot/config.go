package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/dblkit/go-topgg/internal/baseurl"
	"github.com/dblkit/go-topgg/internal/redact"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
)

// config is the bot's whole configuration, read from the environment. Its
// secrets print as [redacted] (plugin.Secret).
type config struct {
	DiscordToken  plugin.Secret    `env:"DISCORD_TOKEN, required"`
	TopggToken    plugin.Secret    `env:"TOPGG_TOKEN, required"`
	TopggAPIURL   string           `env:"TOPGG_API_URL, default=https://top.gg/api"`
	DiscordAPIURL string           `env:"DISCORD_API_URL, default=https://discord.com/api/v9"`
	RewardGuildID plugin.Snowflake `env:"REWARD_GUILD_ID"`
	RewardRoleID  plugin.Snowflake `env:"REWARD_ROLE_ID"`
	ShardCount    int              `env:"SHARD_COUNT, default=1"`
	// Fleet mode (fleet.go): one process of several sharing Redis.
	RedisURL    plugin.Secret `env:"REDIS_URL"`    // may hold a password
	DatabaseURL plugin.Secret `env:"DATABASE_URL"` // points.go
	ShardIDs    shards.IDs    `env:"SHARD_IDS"`
	FleetLease  time.Duration `env:"TOPGG_FLEET_LEASE, default=15s"`
	MetricsAddr string        `env:"METRICS_ADDR"` // metrics.go
	Log         plugin.Log    // LOG_LEVEL, LOG_FORMAT

	Plugin plugin.Config
}

// loadConfig reads and checks the configuration, touching neither the network
// nor the disk; errors name the variable.
func loadConfig(ctx context.Context, l envconfig.Lookuper) (config, error) {
	var c config
	if err := plugin.LoadEnv(ctx, &c, l); err != nil { // it validates c.Plugin
		return config{}, err
	}
	if err := cmp.Or(c.validateClient(l), c.validateFleet(), c.validateRest()); err != nil {
		return config{}, err
	}
	return c, nil
}

// badVariable reports a problem with the environment variable v.
func badVariable(v, problem string) error {
	return &plugin.ConfigError{Variable: v, Problem: problem}
}

// validateClient checks the tokens and base URLs, and the plugin's interval
// floors, which depend on the client (none for a fake on this machine).
func (c config) validateClient(l envconfig.Lookuper) error {
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
	return plugin.ValidateEnv(c, l, client)
}

// validateRest checks the database URL, the reward role and METRICS_ADDR
// (a typo stops the bot at once, not once it is online).
func (c config) validateRest() error {
	if err := pgstore.CheckURL(c.DatabaseURL.Reveal()); c.DatabaseURL.Reveal() != "" && err != nil {
		return badVariable("DATABASE_URL", strings.TrimPrefix(err.Error(), pgstore.ErrBadURL.Error()+": "))
	}
	if (c.RewardGuildID == "") != (c.RewardRoleID == "") {
		return badVariable("REWARD_ROLE_ID", "REWARD_GUILD_ID and REWARD_ROLE_ID must be set together")
	}
	if err := plugin.CheckAddr(c.MetricsAddr); err != nil {
		return badVariable("METRICS_ADDR", err.Error())
	}
	return nil
}

// checkStateDir makes sure the state directory can be created and written
// when a job keeps state there (not in a fleet: Redis keeps it), so that a
// bad TOPGG_STATE_DIR stops the bot before any request.
func checkStateDir(c config) error {
	if c.fleetMode() {
		return nil
	}
	err := c.Plugin.CheckStateDir()
	if ce, ok := errors.AsType[*plugin.ConfigError](err); ok {
		ce.Variable = "TOPGG_STATE_DIR"
	}
	return err
}

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
