package plugin

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
)

// Env is a bot's deployment as read from the environment with [LoadEnv]:
// tokens and API roots, shards, where the state lives (see plugin/deploy),
// the fleet's lease, logging and the plugin's [Config]. Embed it in a bot's
// own configuration; its secrets print as [redacted].
type Env struct {
	DiscordToken  Credential    `env:"DISCORD_TOKEN, required"`
	TopggToken    Credential    `env:"TOPGG_TOKEN, required"`
	TopggAPIURL   string        `env:"TOPGG_API_URL, default=https://top.gg/api"`
	DiscordAPIURL string        `env:"DISCORD_API_URL, default=https://discord.com/api/v9"`
	ShardCount    int           `env:"SHARD_COUNT, default=1"`
	ShardIDs      shards.IDs    `env:"SHARD_IDS"`                              // this process's shards (default all); a subset needs REDIS_URL
	StateDir      string        `env:"TOPGG_STATE_DIR, default=./topgg-state"` // one process's state, without REDIS_URL and DATABASE_URL
	RedisURL      Credential    `env:"REDIS_URL"`                              // a fleet: leadership, counts, and the state unless DATABASE_URL
	DatabaseURL   Credential    `env:"DATABASE_URL"`                           // the state in PostgreSQL
	FleetLease    time.Duration `env:"TOPGG_FLEET_LEASE, default=15s"`
	LogLevel      slog.Level    `env:"LOG_LEVEL"`  // debug, info (the default), warn or error, as slog reads it
	LogFormat     string        `env:"LOG_FORMAT"` // text (the default) or json
	Config        Config
}

// Logger returns a logger writing to w at LOG_LEVEL in LOG_FORMAT.
func (e Env) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: e.LogLevel}
	if e.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Client returns the client of TOPGG_TOKEN at TOPGG_API_URL once Config's floors
// hold for it ([Config.Validate]); a refusal is a *topgg.ConfigError naming the
// variable, or for a floor the Config field (LoadEnv refuses what it reads below one).
func (e Env) Client(opts ...topgg.Option) (*topgg.Client, error) {
	c, err := topgg.New(e.TopggToken.Reveal(), append([]topgg.Option{topgg.WithBaseURL(e.TopggAPIURL)}, opts...)...)
	if err != nil {
		return nil, blame(err, map[string]string{"token": "TOPGG_TOKEN", "base URL": "TOPGG_API_URL"})
	}
	if err := e.Config.Validate(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Shards returns the discordgo sessions of DISCORD_TOKEN for SHARD_IDS of
// SHARD_COUNT at DISCORD_API_URL; a refused value is a *topgg.ConfigError naming it.
func (e Env) Shards(opts ...shards.Option) (*shards.Group, error) {
	g, err := shards.New(e.DiscordToken.Reveal(), e.ShardCount,
		append([]shards.Option{shards.WithAPIBase(e.DiscordAPIURL), shards.WithShardIDs(e.ShardIDs...)}, opts...)...)
	return g, blame(err, map[string]string{"Discord token": "DISCORD_TOKEN", "shard count": "SHARD_COUNT",
		"shard ids": "SHARD_IDS", "Discord API base": "DISCORD_API_URL"})
}

// blame makes err a *topgg.ConfigError naming the variable of a *topgg.ValidationError's field.
func blame(err error, vars map[string]string) error {
	if ve, ok := errors.AsType[*topgg.ValidationError](err); ok && vars[ve.Field] != "" {
		return &topgg.ConfigError{Variable: vars[ve.Field], Err: err}
	}
	return err
}

const maxEnvShards = 4096

// validate checks the rules that tie Env's values together.
func (e Env) validate() error {
	if e.LogFormat != "" && e.LogFormat != "text" && e.LogFormat != "json" {
		return &topgg.ConfigError{Field: "plugin.Env.LogFormat", Variable: "LOG_FORMAT", Problem: "is not text or json"}
	}
	if e.ShardCount > maxEnvShards { // each shard is a gateway connection: Discord's largest bots run a few thousand
		return &topgg.ConfigError{Field: "plugin.Env.ShardCount", Variable: "SHARD_COUNT", Problem: fmt.Sprintf("%d is above %d", e.ShardCount, maxEnvShards)}
	}
	if n := len(e.ShardIDs); n > 0 && n < e.ShardCount && e.RedisURL.Reveal() == "" {
		return &topgg.ConfigError{Field: "plugin.Env.ShardIDs", Variable: "SHARD_IDS", Problem: fmt.Sprintf(
			"runs %d of %d shards, which needs REDIS_URL (a fleet): alone, this process would never see every shard and so never post",
			n, e.ShardCount)}
	}
	if e.RedisURL.Reveal() != "" && (e.FleetLease < fleet.MinLeaseTTL || e.FleetLease > fleet.MaxLeaseTTL) {
		return &topgg.ConfigError{Field: "plugin.Env.FleetLease", Variable: "TOPGG_FLEET_LEASE", Problem: fmt.Sprintf(
			"%v is not between %v and %v", e.FleetLease, fleet.MinLeaseTTL, fleet.MaxLeaseTTL)}
	}
	return nil
}
