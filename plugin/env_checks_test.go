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
		var ce *plugin.ConfigError
		require.ErrorAs(t, cfg.Validate(nil), &ce, bad)
		assert.Equal(t, "plugin.Config.WebhookAddr", ce.Field)
	}
	var c struct{ Plugin plugin.Config }
	err := plugin.LoadEnv(t.Context(), &c, envconfig.MapLookuper(map[string]string{
		"TOPGG_WEBHOOK_ADDR": "8080", "TOPGG_WEBHOOK_SECRET": "whs_x"}))
	var ce *plugin.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_WEBHOOK_ADDR", ce.Variable)
}

// TestValidateEnv: the interval floors, which LoadEnv leaves to New, name the
// variable when it was set, the field when the value came from code; a
// client on this machine has no floors.
func TestValidateEnv(t *testing.T) {
	t.Parallel()
	type botConfig struct {
		Name   string `env:"BOT_NAME"`
		Plugin plugin.Config
	}
	env := envconfig.MapLookuper(map[string]string{"TOPGG_VOTE_POLL_INTERVAL": "1s"})
	var c botConfig
	require.NoError(t, plugin.LoadEnv(t.Context(), &c, env))
	real, err := topgg.New("token")
	require.NoError(t, err)
	var ce *plugin.ConfigError
	require.ErrorAs(t, plugin.ValidateEnv(&c, env, real), &ce)
	assert.Equal(t, "TOPGG_VOTE_POLL_INTERVAL", ce.Variable)
	assert.Contains(t, ce.Error(), "TOPGG_VOTE_POLL_INTERVAL: 1s is below 10s")

	fake, err := topgg.New("token", topgg.WithBaseURL("http://127.0.0.1:1"))
	require.NoError(t, err)
	require.NoError(t, plugin.ValidateEnv(c, env, fake), "a loopback client has no floors")

	c.Plugin.AutopostInterval = time.Minute // set in code
	require.ErrorAs(t, plugin.ValidateEnv(&c, envconfig.MapLookuper(nil), real), &ce)
	assert.Empty(t, ce.Variable)
	assert.Equal(t, "plugin.Config.AutopostInterval", ce.Field)
	assert.Error(t, plugin.ValidateEnv(nil, env, real))
	assert.Error(t, plugin.ValidateEnv(42, env, real))
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

// TestLogFromEnv: LOG_LEVEL takes slog's levels in any case and nothing
// else, LOG_FORMAT text or json, each error naming its variable; unset is
// info and text; the logger writes at that level in that format.
func TestLogFromEnv(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) (plugin.Env, error) {
		var c plugin.Env
		env = maps.Clone(env)
		env["DISCORD_TOKEN"], env["TOPGG_TOKEN"] = "d", "t"
		return c, plugin.LoadEnv(t.Context(), &c, envconfig.MapLookuper(env))
	}
	for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "INFO": slog.LevelInfo, "Warn": slog.LevelWarn, "error": slog.LevelError} {
		c, err := load(map[string]string{"LOG_LEVEL": in})
		require.NoError(t, err, in)
		assert.Equal(t, want, c.LogLevel, in)
	}
	for variable, bads := range map[string][]string{"LOG_LEVEL": {"", "trace", "warning", "1"}, "LOG_FORMAT": {"", "xml", "JSON"}} {
		for _, bad := range bads {
			_, err := load(map[string]string{variable: bad})
			var ce *plugin.ConfigError
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
		var ce *plugin.ConfigError
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
