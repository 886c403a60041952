package main

import (
	"context"

	"github.com/sethvargo/go-envconfig"

	"github.com/dblkit/go-topgg/plugin"
)

// config is the bot's whole configuration, read from the environment: the
// deployment (plugin.Env: tokens, shards, state, fleet, the plugin's
// settings) and the bot's own variables. Its secrets print as [redacted].
type config struct {
	plugin.Env
	RewardGuildID plugin.Snowflake `env:"REWARD_GUILD_ID"`
	RewardRoleID  plugin.Snowflake `env:"REWARD_ROLE_ID"`
	MetricsAddr   string           `env:"METRICS_ADDR"` // metrics.go
}

// loadConfig reads and checks the configuration, touching neither the
// network nor the disk; errors name the variable.
func loadConfig(ctx context.Context, l envconfig.Lookuper) (config, error) {
	var c config
	if err := plugin.LoadEnv(ctx, &c, l); err != nil {
		return config{}, err
	}
	if (c.RewardGuildID == "") != (c.RewardRoleID == "") {
		return config{}, &plugin.ConfigError{Variable: "REWARD_ROLE_ID", Problem: "REWARD_GUILD_ID and REWARD_ROLE_ID must be set together"}
	}
	if err := plugin.CheckAddr(c.MetricsAddr); err != nil {
		return config{}, &plugin.ConfigError{Variable: "METRICS_ADDR", Err: err}
	}
	return c, nil
}
