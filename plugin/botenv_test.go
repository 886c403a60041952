package plugin_test

import (
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
)

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
		var ce *plugin.ConfigError
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
		var ce *plugin.ConfigError
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
	assert.False(t, e.Fleet())
	e, err = load(map[string]string{"TOPGG_STATE_DIR": "/var/lib/bot", "TOPGG_VOTE_POLL_INTERVAL": "0"})
	require.NoError(t, err)
	assert.Equal(t, "/var/lib/bot", e.StateDir)
	assert.False(t, e.Config.PollsVotes(), "the plugin's Config is read too")
	_, err = load(map[string]string{"TOPGG_STATE_DIR": ""})
	var empty *plugin.ConfigError
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
		var ce *plugin.ConfigError
		require.ErrorAs(t, err, &ce, "%v", tc.vars)
		assert.Equal(t, tc.variable, ce.Variable)
		assert.NotContains(t, err.Error(), "hunter2")
	}
}
