package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/sethvargo/go-envconfig"

	"github.com/dblkit/go-topgg/plugin"
)

// config is the bot's whole configuration, read from the environment.
type config struct {
	DiscordToken  string `env:"DISCORD_TOKEN, required"`
	TopggToken    string `env:"TOPGG_TOKEN, required"`
	TopggAPIURL   string `env:"TOPGG_API_URL, default=https://top.gg/api"`
	DiscordAPIURL string `env:"DISCORD_API_URL, default=https://discord.com/api/v9"`
	RewardGuildID string `env:"REWARD_GUILD_ID"`
	RewardRoleID  string `env:"REWARD_ROLE_ID"`
	ShardCount    int    `env:"SHARD_COUNT, default=1"`
	LogLevel      string `env:"LOG_LEVEL, default=info"`
	LogFormat     string `env:"LOG_FORMAT, default=text"`

	Plugin plugin.Config
}

// loadConfig reads and checks the configuration; errors name the variable.
func loadConfig(ctx context.Context, l envconfig.Lookuper) (config, error) {
	var c config
	if err := plugin.LoadEnv(ctx, &c, l); err != nil {
		return config{}, err
	}
	return c, c.validate()
}

func (c config) validate() error {
	bad := func(v, problem string) error { return &plugin.ConfigError{Variable: v, Problem: problem} }
	if strings.TrimSpace(c.DiscordToken) == "" {
		return bad("DISCORD_TOKEN", "is empty")
	}
	if strings.TrimSpace(c.TopggToken) == "" {
		return bad("TOPGG_TOKEN", "is empty")
	}
	for _, u := range []struct{ name, value string }{{"TOPGG_API_URL", c.TopggAPIURL}, {"DISCORD_API_URL", c.DiscordAPIURL}} {
		p, err := url.Parse(u.value)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return bad(u.name, fmt.Sprintf("%q is not an absolute http(s) URL", u.value))
		}
	}
	if (c.RewardGuildID == "") != (c.RewardRoleID == "") {
		return bad("REWARD_ROLE_ID", "REWARD_GUILD_ID and REWARD_ROLE_ID must be set together")
	}
	for _, id := range []struct{ name, value string }{{"REWARD_GUILD_ID", c.RewardGuildID}, {"REWARD_ROLE_ID", c.RewardRoleID}} {
		if strings.Trim(id.value, "0123456789") != "" {
			return bad(id.name, fmt.Sprintf("%q is not a Discord id", id.value))
		}
	}
	if c.ShardCount < 1 {
		return bad("SHARD_COUNT", fmt.Sprintf("%d is not a positive number", c.ShardCount))
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return bad("LOG_LEVEL", err.Error())
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return bad("LOG_FORMAT", fmt.Sprintf("%q is not text or json", c.LogFormat))
	}
	if err := c.Plugin.Validate(); err != nil {
		return err
	}
	return nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	switch strings.ToLower(s) {
	case "debug", "info", "warn", "error":
		return l, l.UnmarshalText([]byte(s))
	}
	return l, fmt.Errorf("%q is not debug, info, warn or error", s)
}
