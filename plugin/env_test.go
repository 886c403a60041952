package plugin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
)

// TestCheckAddr: empty, host:port and :port pass; anything else fails, and
// Validate names WebhookAddr (LoadEnv: TOPGG_WEBHOOK_ADDR).
func TestCheckAddr(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", ":8080", "127.0.0.1:0", "[::1]:9090", "localhost:65535"} {
		assert.NoError(t, plugin.CheckAddr(ok), ok)
	}
	for _, bad := range []string{"8080", "localhost", "http://127.0.0.1:9090", ":", ":70000", "localhost:http", ":08080", "a b:80", "a/b:80"} {
		assert.Error(t, plugin.CheckAddr(bad), bad)
		cfg := plugin.Config{WebhookAddr: bad, WebhookSecrets: plugin.WebhookSecrets{"whs_x"}}
		var ce *topgg.ConfigError
		require.ErrorAs(t, cfg.Validate(nil), &ce, bad)
		assert.Equal(t, "plugin.Config.WebhookAddr", ce.Field)
	}
	var c struct{ Plugin plugin.Config }
	err := plugin.LoadEnv(t.Context(), &c, envconfig.MapLookuper(map[string]string{
		"TOPGG_WEBHOOK_ADDR": "8080", "TOPGG_WEBHOOK_SECRET": "whs_x"}))
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_WEBHOOK_ADDR", ce.Variable)
}

// TestEnvFloorsNameWhereTheValueCameFrom: an interval below its floor read
// from the environment is refused by LoadEnv naming its variable; set in code
// (before LoadEnv, which keeps it, or after), LoadEnv and Env.Client name the
// Config field; a client on this machine has no floors, and a refused
// TOPGG_API_URL is named before them.
func TestEnvFloorsNameWhereTheValueCameFrom(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DISCORD_TOKEN": "d", "TOPGG_TOKEN": "t"}
	var e plugin.Env
	err := plugin.LoadEnv(t.Context(), &e, envconfig.MapLookuper(map[string]string{
		"DISCORD_TOKEN": "d", "TOPGG_TOKEN": "t", "TOPGG_VOTE_POLL_INTERVAL": "1s"}))
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_VOTE_POLL_INTERVAL", ce.Variable)
	assert.Contains(t, ce.Error(), "TOPGG_VOTE_POLL_INTERVAL: 1s is below 10s")

	inCode := plugin.Env{Config: plugin.Config{VotePollInterval: new(time.Second)}}
	err = plugin.LoadEnv(t.Context(), &inCode, envconfig.MapLookuper(env))
	require.ErrorAs(t, err, &ce)
	assert.Empty(t, ce.Variable)
	assert.Contains(t, err.Error(), "plugin.Config.VotePollInterval: 1s is below 10s")

	e = goodEnv()
	e.Config.AutopostInterval = time.Minute
	_, err = e.Client()
	require.ErrorAs(t, err, &ce)
	assert.Empty(t, ce.Variable)
	assert.Contains(t, err.Error(), "plugin.Config.AutopostInterval: 1m0s is below")

	e.TopggAPIURL = "http://127.0.0.1:1"
	_, err = e.Client()
	require.NoError(t, err, "a loopback client has no floors")
	env["TOPGG_API_URL"], env["TOPGG_VOTE_POLL_INTERVAL"] = "http://127.0.0.1:1/api", "1s"
	require.NoError(t, plugin.LoadEnv(t.Context(), &plugin.Env{}, envconfig.MapLookuper(env)))

	// Refused by the client (plain http off this machine; a /v1 root): named
	// before any floor.
	for _, url := range []string{"http://example.com/api", "https://top.gg/api/v1"} {
		env["TOPGG_API_URL"] = url
		e = plugin.Env{}
		require.NoError(t, plugin.LoadEnv(t.Context(), &e, envconfig.MapLookuper(env)), url)
		_, err = e.Client()
		require.ErrorAs(t, err, &ce, url)
		assert.Equal(t, "TOPGG_API_URL", ce.Variable, url)
	}
}

// TestCredentialRedacts: a Credential never prints its value, under any verb, in
// slog or JSON, even from an unexported field where fmt calls no method; an
// unset one prints empty, so a missing token is told apart.
func TestCredentialRedacts(t *testing.T) {
	t.Parallel()
	const value = "rediss://ops:hunter2@redis.example:6380/0"
	type cfg struct {
		URL plugin.Credential `env:"REDIS_URL"`
	}
	var c cfg
	require.NoError(t, plugin.LoadEnv(t.Context(), &c, envconfig.MapLookuper(map[string]string{"REDIS_URL": value})))
	assert.Equal(t, value, c.URL.Reveal())
	var outs []string
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%20v", "%d"} {
		outs = append(outs, fmt.Sprintf(format, c), fmt.Sprintf(format, &c), fmt.Sprintf(format, c.URL))
	}
	outs = append(outs, fmt.Sprintf("%v %+v %#v", struct{ c cfg }{c}, struct{ s plugin.Credential }{c.URL}, []any{struct{ c cfg }{c}}))
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("config", "cfg", c, "url", c.URL)
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "cfg", c)
	js, err := json.Marshal(c)
	require.NoError(t, err)
	outs = append(outs, buf.String(), string(js))
	for _, out := range outs {
		assert.NotContains(t, out, "hunter2")
	}
	assert.Equal(t, "{URL:[redacted]}", fmt.Sprintf("%+v", c))
	assert.Equal(t, "{URL:}", fmt.Sprintf("%+v", cfg{}), "unset shows empty")
	assert.Empty(t, plugin.Credential{}.Reveal())
	assert.Equal(t, "[redacted]", fmt.Sprint(plugin.NewCredential("")), "set, even empty")
}

// TestLogFromEnv: LOG_LEVEL takes slog's levels in any case (with slog's
// offsets, info+2) and nothing else, LOG_FORMAT text or json, each error naming its variable; unset is
// info and text; the logger writes at that level in that format.
func TestLogFromEnv(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) (plugin.Env, error) {
		var c plugin.Env
		env = maps.Clone(env)
		env["DISCORD_TOKEN"], env["TOPGG_TOKEN"] = "d", "t"
		return c, plugin.LoadEnv(t.Context(), &c, envconfig.MapLookuper(env))
	}
	for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "INFO": slog.LevelInfo, "Warn": slog.LevelWarn, "error": slog.LevelError, "info+2": slog.LevelInfo + 2} {
		c, err := load(map[string]string{"LOG_LEVEL": in})
		require.NoError(t, err, in)
		assert.Equal(t, want, c.LogLevel, in)
	}
	for variable, bads := range map[string][]string{"LOG_LEVEL": {"", "trace", "warning", "1"}, "LOG_FORMAT": {"", "xml", "JSON"}} {
		for _, bad := range bads {
			_, err := load(map[string]string{variable: bad})
			var ce *topgg.ConfigError
			require.ErrorAs(t, err, &ce, bad)
			assert.Equal(t, variable, ce.Variable, bad)
		}
	}
	c, err := load(map[string]string{})
	require.NoError(t, err)
	var buf bytes.Buffer
	c.Logger(&buf).Debug("hidden")
	c.Logger(&buf).Info("shown")
	assert.NotContains(t, buf.String(), "hidden")
	assert.Contains(t, buf.String(), "level=INFO msg=shown")

	buf.Reset()
	c, err = load(map[string]string{"LOG_LEVEL": "warn", "LOG_FORMAT": "json"})
	require.NoError(t, err)
	c.Logger(&buf).Info("hidden")
	c.Logger(&buf).Warn("shown", "n", 1)
	assert.NotContains(t, buf.String(), "hidden")
	assert.Contains(t, buf.String(), `"msg":"shown","n":1}`)
}

// TestSnowflake: a Discord ID from a variable; anything else fails naming
// the variable, without the value.
func TestSnowflake(t *testing.T) {
	t.Parallel()
	type cfg struct {
		Guild plugin.Snowflake `env:"REWARD_GUILD_ID"`
	}
	var c cfg
	require.NoError(t, plugin.LoadEnv(t.Context(), &c, envconfig.MapLookuper(map[string]string{"REWARD_GUILD_ID": "1200000000000000001"})))
	assert.Equal(t, plugin.Snowflake("1200000000000000001"), c.Guild)
	for _, bad := range []string{"my-guild", "01200000000000000001", "18446744073709551616", "-1", "1 "} {
		err := plugin.LoadEnv(t.Context(), &cfg{}, envconfig.MapLookuper(map[string]string{"REWARD_GUILD_ID": bad}))
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, bad)
		assert.Equal(t, "REWARD_GUILD_ID", ce.Variable)
		assert.NotContains(t, err.Error(), bad)
	}
}

// TestPollsVotes: polling is on by default and with an interval, off with 0.
func TestPollsVotes(t *testing.T) {
	t.Parallel()
	assert.True(t, plugin.Config{}.PollsVotes())
	assert.True(t, plugin.Config{VotePollInterval: new(time.Minute)}.PollsVotes())
	assert.False(t, plugin.Config{VotePollInterval: new(time.Duration(0))}.PollsVotes())
}

// TestLoadEnvRefusesAMisspelledVariable: a TOPGG_ variable nothing reads
// (TOPGG_AUTOPOST_INTERVALL) is an error naming it and the closest variable,
// never its value; the bot's own TOPGG_ fields and Env's are known.
func TestLoadEnvRefusesAMisspelledVariable(t *testing.T) {
	t.Parallel()
	var cfg plugin.Config
	err := plugin.LoadEnv(t.Context(), &cfg, envconfig.MapLookuper(map[string]string{"TOPGG_AUTOPOST_INTERVALL": "45m-secret"}))
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_AUTOPOST_INTERVALL", ce.Variable)
	assert.Contains(t, err.Error(), "did you mean TOPGG_AUTOPOST_INTERVAL?")
	assert.NotContains(t, err.Error(), "45m-secret")

	err = plugin.LoadEnv(t.Context(), &cfg, envconfig.MapLookuper(map[string]string{"TOPGG_NOTHING_LIKE_IT": "1"}))
	require.ErrorAs(t, err, &ce)
	assert.NotContains(t, err.Error(), "did you mean")

	var own struct {
		Extra  string `env:"TOPGG_MY_EXTRA"`
		Config plugin.Config
	}
	require.NoError(t, plugin.LoadEnv(t.Context(), &own, envconfig.MapLookuper(map[string]string{
		"TOPGG_MY_EXTRA": "x", "TOPGG_TOKEN": "read by Env", "TOPGG_STATE_DIR": "/srv", "TOPGG_AUTOPOST": "v0"})))
}

// TestLoadEnvRefusesAMisspelledProcessVariable: the same in the process
// environment (a nil lookuper).
func TestLoadEnvRefusesAMisspelledProcessVariable(t *testing.T) {
	t.Setenv("TOPGG_WEBHOOK_SECRETS", "whs_x")
	var cfg plugin.Config
	err := plugin.LoadEnv(t.Context(), &cfg, nil)
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_WEBHOOK_SECRETS", ce.Variable)
	assert.Contains(t, err.Error(), "did you mean TOPGG_WEBHOOK_SECRET?")
}

// goodEnv is an Env every check accepts: one process, one shard.
func goodEnv() plugin.Env {
	return plugin.Env{
		DiscordToken: plugin.NewCredential("discord.token.value"), TopggToken: plugin.NewCredential("topgg-token"),
		TopggAPIURL: "https://top.gg/api", DiscordAPIURL: "https://discord.com/api/v9", ShardCount: 2,
	}
}

// TestEnvClientAndShards: Client and Shards build from the Env; a value the
// client or the shards refuse is a *ConfigError naming its variable, which
// unwraps to the refusal, and shows no token.
func TestEnvClientAndShards(t *testing.T) {
	t.Parallel()
	c, err := goodEnv().Client()
	require.NoError(t, err)
	assert.NotNil(t, c)
	g, err := goodEnv().Shards()
	require.NoError(t, err)
	assert.Len(t, g.Sessions(), 2)

	for variable, env := range map[string]func(*plugin.Env){
		"TOPGG_TOKEN":   func(e *plugin.Env) { e.TopggToken = plugin.NewCredential("Bearer topgg-token") },
		"TOPGG_API_URL": func(e *plugin.Env) { e.TopggAPIURL = "ftp://top.gg/api" },
	} {
		e := goodEnv()
		env(&e)
		_, err := e.Client()
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, variable)
		assert.Equal(t, variable, ce.Variable)
		var ve *topgg.ValidationError
		assert.ErrorAs(t, err, &ve, "the client's refusal is kept")
		assert.NotContains(t, err.Error(), "topgg-token")
	}
	for variable, env := range map[string]func(*plugin.Env){
		"DISCORD_TOKEN":   func(e *plugin.Env) { e.DiscordToken = plugin.NewCredential("discord token.value") },
		"SHARD_COUNT":     func(e *plugin.Env) { e.ShardCount = 0 },
		"SHARD_IDS":       func(e *plugin.Env) { e.ShardIDs = shards.IDs{2} },
		"DISCORD_API_URL": func(e *plugin.Env) { e.DiscordAPIURL = "discord.com" },
	} {
		e := goodEnv()
		env(&e)
		_, err := e.Shards()
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, variable)
		assert.Equal(t, variable, ce.Variable)
		assert.NotContains(t, err.Error(), "token.value")
	}
}

// TestLoadEnvOfADeployment: LoadEnv reads an Env with its defaults
// (TOPGG_STATE_DIR ./topgg-state, a 15 s lease), refuses a variable set but
// empty as it does Config's, and refuses what ties two variables: a subset
// of the shards needs REDIS_URL (alone, a process never sees every shard),
// and in a fleet TOPGG_FLEET_LEASE is within the fleet's bounds (not checked
// without REDIS_URL, where there is no lease).
func TestLoadEnvOfADeployment(t *testing.T) {
	t.Parallel()
	load := func(vars map[string]string) (plugin.Env, error) {
		env := map[string]string{"DISCORD_TOKEN": "d", "TOPGG_TOKEN": "t"}
		for k, v := range vars {
			env[k] = v
		}
		var c struct{ Bot plugin.Env }
		err := plugin.LoadEnv(t.Context(), &c, envconfig.MapLookuper(env))
		return c.Bot, err
	}
	e, err := load(nil)
	require.NoError(t, err)
	assert.Equal(t, "./topgg-state", e.StateDir)
	assert.Equal(t, 15*time.Second, e.FleetLease)
	assert.Equal(t, 1, e.ShardCount)
	assert.Empty(t, e.RedisURL.Reveal())
	e, err = load(map[string]string{"TOPGG_STATE_DIR": "/var/lib/bot", "TOPGG_VOTE_POLL_INTERVAL": "0"})
	require.NoError(t, err)
	assert.Equal(t, "/var/lib/bot", e.StateDir)
	assert.False(t, e.Config.PollsVotes(), "the plugin's Config is read too")
	_, err = load(map[string]string{"TOPGG_STATE_DIR": ""})
	var empty *topgg.ConfigError
	require.ErrorAs(t, err, &empty)
	assert.Equal(t, "TOPGG_STATE_DIR", empty.Variable)
	assert.Contains(t, empty.Problem, "set but empty", "no silent default for a variable set empty")

	const redis = "redis://:hunter2@127.0.0.1:6379/0"
	for _, tc := range []struct {
		vars     map[string]string
		variable string // "": accepted
	}{
		{map[string]string{"SHARD_COUNT": "4", "SHARD_IDS": "0-1"}, "SHARD_IDS"},
		{map[string]string{"SHARD_COUNT": "4", "SHARD_IDS": "0-3"}, ""},
		{map[string]string{"SHARD_COUNT": "4", "SHARD_IDS": "0-1", "REDIS_URL": redis}, ""},
		{map[string]string{"TOPGG_FLEET_LEASE": "500ms", "REDIS_URL": redis}, "TOPGG_FLEET_LEASE"},
		{map[string]string{"TOPGG_FLEET_LEASE": "11m", "REDIS_URL": redis}, "TOPGG_FLEET_LEASE"},
		{map[string]string{"TOPGG_FLEET_LEASE": "1s", "REDIS_URL": redis}, ""},
		{map[string]string{"TOPGG_FLEET_LEASE": "500ms"}, ""},
	} {
		_, err := load(tc.vars)
		if tc.variable == "" {
			require.NoError(t, err, "%v", tc.vars)
			continue
		}
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, "%v", tc.vars)
		assert.Equal(t, tc.variable, ce.Variable)
		assert.NotContains(t, err.Error(), "hunter2")
	}
}
