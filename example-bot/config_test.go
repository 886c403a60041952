package main

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
)

// Distinctive tokens: any output that holds one of them leaked it.
const (
	unitDiscordToken = "unit-discord-token-9c41e7"
	unitTopggToken   = "unit-topgg-token-51ab0d"
)

// validEnv is a complete, valid environment whose URLs point at base.
func validEnv(base string) map[string]string {
	return map[string]string{
		"DISCORD_TOKEN":   unitDiscordToken,
		"TOPGG_TOKEN":     unitTopggToken,
		"TOPGG_API_URL":   base + "/api",
		"DISCORD_API_URL": base + "/api/v9/",
	}
}

// TestLoadConfigDefaults: with only the tokens set, every variable takes the
// default the README's table gives.
func TestLoadConfigDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(map[string]string{
		"DISCORD_TOKEN": unitDiscordToken, "TOPGG_TOKEN": unitTopggToken,
	}))
	require.NoError(t, err)
	assert.Equal(t, config{
		DiscordToken:  unitDiscordToken,
		TopggToken:    unitTopggToken,
		TopggAPIURL:   "https://top.gg/api",
		DiscordAPIURL: "https://discord.com/api/v9",
		ShardCount:    1,
		LogLevel:      "info",
		LogFormat:     "text",
		Plugin: plugin.Config{
			Autopost:         "v1",
			AutopostInterval: 30 * time.Minute,
			SyncCommands:     true,
			VotePollInterval: time.Minute,
			VoteLookback:     12 * time.Hour,
			StateDir:         "./topgg-state",
		},
	}, cfg)
}

// TestLoadConfigEveryVariable: each variable of the bot sets its field.
func TestLoadConfigEveryVariable(t *testing.T) {
	t.Parallel()
	env := validEnv("http://127.0.0.1:1")
	maps.Copy(env, map[string]string{
		"TOPGG_AUTOPOST": "v0", "TOPGG_AUTOPOST_INTERVAL": "20m", "TOPGG_SYNC_COMMANDS": "false",
		"TOPGG_VOTE_POLL_INTERVAL": "0", "TOPGG_VOTE_LOOKBACK": "1h", "TOPGG_STATE_DIR": "/srv/state",
		"REWARD_GUILD_ID": "1200000000000000001", "REWARD_ROLE_ID": "1300000000000000001",
		"SHARD_COUNT": "4", "LOG_LEVEL": "DEBUG", "LOG_FORMAT": "json",
	})
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
	require.NoError(t, err)
	assert.Equal(t, config{
		DiscordToken: unitDiscordToken, TopggToken: unitTopggToken,
		TopggAPIURL: "http://127.0.0.1:1/api", DiscordAPIURL: "http://127.0.0.1:1/api/v9/",
		RewardGuildID: "1200000000000000001", RewardRoleID: "1300000000000000001",
		ShardCount: 4, LogLevel: "DEBUG", LogFormat: "json",
		Plugin: plugin.Config{
			Autopost: "v0", AutopostInterval: 20 * time.Minute, SyncCommands: false,
			VotePollInterval: 0, VoteLookback: time.Hour, StateDir: "/srv/state",
		},
	}, cfg)
}

// TestConfigErrorsExitAtOnce: a missing or malformed variable makes run exit
// with status 2 and exactly one line on stderr that names the variable, with no
// stack trace, no token, and before any network call.
func TestConfigErrorsExitAtOnce(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		name     string
		set      map[string]string
		unset    []string
		variable string
	}{
		{"missing discord token", nil, []string{"DISCORD_TOKEN"}, "DISCORD_TOKEN"},
		{"missing topgg token", nil, []string{"TOPGG_TOKEN"}, "TOPGG_TOKEN"},
		{"blank discord token", map[string]string{"DISCORD_TOKEN": "   "}, nil, "DISCORD_TOKEN"},
		{"blank topgg token", map[string]string{"TOPGG_TOKEN": ""}, nil, "TOPGG_TOKEN"},
		{"relative topgg url", map[string]string{"TOPGG_API_URL": "top.gg/api"}, nil, "TOPGG_API_URL"},
		{"ftp discord url", map[string]string{"DISCORD_API_URL": "ftp://discord.com/api"}, nil, "DISCORD_API_URL"},
		{"autopost mode", map[string]string{"TOPGG_AUTOPOST": "v2"}, nil, "TOPGG_AUTOPOST"},
		{"autopost interval", map[string]string{"TOPGG_AUTOPOST_INTERVAL": "fast"}, nil, "TOPGG_AUTOPOST_INTERVAL"},
		{"autopost interval zero", map[string]string{"TOPGG_AUTOPOST_INTERVAL": "0s"}, nil, "TOPGG_AUTOPOST_INTERVAL"},
		{"poll interval", map[string]string{"TOPGG_VOTE_POLL_INTERVAL": "-1m"}, nil, "TOPGG_VOTE_POLL_INTERVAL"},
		{"lookback", map[string]string{"TOPGG_VOTE_LOOKBACK": "10000h"}, nil, "TOPGG_VOTE_LOOKBACK"},
		{"sync commands", map[string]string{"TOPGG_SYNC_COMMANDS": "sure"}, nil, "TOPGG_SYNC_COMMANDS"},
		{"state dir", map[string]string{"TOPGG_STATE_DIR": ""}, nil, "TOPGG_STATE_DIR"},
		{"role without guild", map[string]string{"REWARD_ROLE_ID": "1300000000000000001"}, nil, "REWARD_ROLE_ID"},
		{"guild without role", map[string]string{"REWARD_GUILD_ID": "1200000000000000001"}, nil, "REWARD_ROLE_ID"},
		{"guild id", map[string]string{"REWARD_GUILD_ID": "my-guild", "REWARD_ROLE_ID": "1"}, nil, "REWARD_GUILD_ID"},
		{"role id", map[string]string{"REWARD_GUILD_ID": "1", "REWARD_ROLE_ID": "voter"}, nil, "REWARD_ROLE_ID"},
		{"shard count zero", map[string]string{"SHARD_COUNT": "0"}, nil, "SHARD_COUNT"},
		{"shard count word", map[string]string{"SHARD_COUNT": "two"}, nil, "SHARD_COUNT"},
		{"log level", map[string]string{"LOG_LEVEL": "loud"}, nil, "LOG_LEVEL"},
		{"log format", map[string]string{"LOG_FORMAT": "xml"}, nil, "LOG_FORMAT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := validEnv(srv.URL)
			maps.Copy(env, tc.set)
			for _, k := range tc.unset {
				delete(env, k)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), nil, envconfig.MapLookuper(env), &stdout, &stderr)
			assert.Equal(t, exitConfig, code)
			out := stderr.String()
			assert.Equal(t, 1, strings.Count(out, "\n"), "exactly one line: %q", out)
			assert.True(t, strings.HasSuffix(out, "\n"))
			assert.True(t, strings.HasPrefix(out, "example-bot: configuration: "+tc.variable+": "), "%q", out)
			for _, bad := range []string{"goroutine ", "panic", ".go:", unitDiscordToken, unitTopggToken} {
				assert.NotContains(t, out, bad)
			}
			assert.Empty(t, stdout.String())
		})
	}
	t.Cleanup(func() { assert.Zero(t, hits.Load(), "a configuration error made a network call") })
}

// TestBadFlagExits: an unknown flag is a usage error (status 2), not a run.
func TestBadFlagExits(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-no-such-flag"}, envconfig.MapLookuper(nil), &stdout, &stderr)
	assert.Equal(t, exitConfig, code)
	assert.Contains(t, stderr.String(), "-no-such-flag")
	assert.Contains(t, stderr.String(), "-demo", "the usage lists the flags")
}

// TestParseLevel: the four levels, in any case, and nothing else.
func TestParseLevel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"debug": "DEBUG", "INFO": "INFO", "Warn": "WARN", "error": "ERROR"} {
		l, err := parseLevel(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, l.String())
	}
	for _, in := range []string{"", "trace", "warning", "info+1"} {
		_, err := parseLevel(in)
		assert.Error(t, err, in)
	}
}

// TestNewLogger: the format and the level are those configured.
func TestNewLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := newLogger("warn", "json", &buf)
	log.Info("hidden")
	log.Warn("shown", "n", 1)
	assert.NotContains(t, buf.String(), "hidden")
	assert.Contains(t, buf.String(), `"msg":"shown","n":1}`)

	buf.Reset()
	newLogger("debug", "text", &buf).Debug("details")
	assert.Contains(t, buf.String(), "level=DEBUG msg=details")
}
