package plugin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
)

// TestLoadConfigDefaults: an empty environment gives the documented defaults,
// which are valid.
func TestLoadConfigDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := plugin.LoadConfig(context.Background(), envconfig.MapLookuper(nil))
	require.NoError(t, err)
	assert.Equal(t, plugin.Config{
		Autopost:         "v1",
		AutopostInterval: 30 * time.Minute,
		SyncCommands:     true,
		VotePollInterval: time.Minute,
		VoteLookback:     12 * time.Hour,
		StateDir:         "./topgg-state",
	}, cfg)
}

// TestLoadConfigEveryVariable: each variable sets its field.
func TestLoadConfigEveryVariable(t *testing.T) {
	t.Parallel()
	cfg, err := plugin.LoadConfig(context.Background(), envconfig.MapLookuper(map[string]string{
		"TOPGG_AUTOPOST":           "v0",
		"TOPGG_AUTOPOST_INTERVAL":  "45m",
		"TOPGG_SYNC_COMMANDS":      "false",
		"TOPGG_VOTE_POLL_INTERVAL": "90s",
		"TOPGG_VOTE_LOOKBACK":      "2h30m",
		"TOPGG_STATE_DIR":          "/var/lib/bot",
	}))
	require.NoError(t, err)
	assert.Equal(t, plugin.Config{
		Autopost:         plugin.AutopostV0,
		AutopostInterval: 45 * time.Minute,
		SyncCommands:     false,
		VotePollInterval: 90 * time.Second,
		VoteLookback:     150 * time.Minute,
		StateDir:         "/var/lib/bot",
	}, cfg)
}

// TestLoadConfigTurnsJobsOff: "off" and 0 turn jobs off, and the settings of
// a job that is off are not checked.
func TestLoadConfigTurnsJobsOff(t *testing.T) {
	t.Parallel()
	cfg, err := plugin.LoadConfig(context.Background(), envconfig.MapLookuper(map[string]string{
		"TOPGG_AUTOPOST":           "off",
		"TOPGG_AUTOPOST_INTERVAL":  "0s",
		"TOPGG_VOTE_POLL_INTERVAL": "0",
		"TOPGG_VOTE_LOOKBACK":      "0s",
		"TOPGG_STATE_DIR":          "",
	}))
	require.NoError(t, err)
	assert.Equal(t, plugin.AutopostOff, cfg.Autopost)
	assert.Zero(t, cfg.VotePollInterval)
}

// TestLoadConfigMalformed: every malformed or out-of-range value is a
// *ConfigError that names the variable (not the Go field) and says what is wrong.
func TestLoadConfigMalformed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		variable, value string
		problem         string // a piece of the message
	}{
		{"TOPGG_AUTOPOST", "v2", `"v2" is not one of v1, v0, off`},
		{"TOPGG_AUTOPOST", "", "is not one of"},
		{"TOPGG_AUTOPOST_INTERVAL", "soon", `invalid duration "soon"`},
		{"TOPGG_AUTOPOST_INTERVAL", "0s", "not a positive duration"},
		{"TOPGG_AUTOPOST_INTERVAL", "-5m", "not a positive duration"},
		{"TOPGG_VOTE_POLL_INTERVAL", "often", `invalid duration "often"`},
		{"TOPGG_VOTE_POLL_INTERVAL", "-1s", "negative"},
		{"TOPGG_VOTE_LOOKBACK", "forever", `invalid duration "forever"`},
		{"TOPGG_VOTE_LOOKBACK", "0s", "not a positive duration"},
		{"TOPGG_VOTE_LOOKBACK", "9000h", "more than one year"},
		{"TOPGG_SYNC_COMMANDS", "maybe", `"maybe"`},
		{"TOPGG_STATE_DIR", "", "empty"},
	} {
		t.Run(tc.variable+"="+tc.value, func(t *testing.T) {
			t.Parallel()
			_, err := plugin.LoadConfig(context.Background(), envconfig.MapLookuper(map[string]string{tc.variable: tc.value}))
			var ce *plugin.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.variable, ce.Variable)
			assert.Contains(t, ce.Problem, tc.problem)
			assert.Equal(t, tc.variable+": "+ce.Problem, err.Error())
			assert.NotContains(t, err.Error(), "Interval", "the Go field name is not the operator's word")
		})
	}
}

// botConfig is a bot's own configuration embedding plugin.Config, as the
// package comment suggests.
type botConfig struct {
	Token  string `env:"BOT_TOKEN, required"`
	Shards int    `env:"SHARDS, default=1"`
	Plugin plugin.Config
}

// TestLoadEnvEmbedded: LoadEnv fills a bot's struct that embeds Config, and
// names the variable of a bad value also inside the embedded struct.
func TestLoadEnvEmbedded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	var c botConfig
	require.NoError(t, plugin.LoadEnv(ctx, &c, envconfig.MapLookuper(map[string]string{
		"BOT_TOKEN": "x", "TOPGG_AUTOPOST": "off",
	})))
	assert.Equal(t, 1, c.Shards)
	assert.Equal(t, plugin.AutopostOff, c.Plugin.Autopost)
	assert.Equal(t, time.Minute, c.Plugin.VotePollInterval, "defaults of the embedded struct apply")

	for _, tc := range []struct {
		env      map[string]string
		variable string
		problem  string
	}{
		{map[string]string{}, "BOT_TOKEN", "is required but not set"},
		{map[string]string{"BOT_TOKEN": "x", "SHARDS": "two"}, "SHARDS", `"two"`},
		{map[string]string{"BOT_TOKEN": "x", "TOPGG_VOTE_LOOKBACK": "long"}, "TOPGG_VOTE_LOOKBACK", `invalid duration "long"`},
		{map[string]string{"BOT_TOKEN": "x", "TOPGG_SYNC_COMMANDS": "yes please"}, "TOPGG_SYNC_COMMANDS", "yes please"},
	} {
		var c botConfig
		err := plugin.LoadEnv(ctx, &c, envconfig.MapLookuper(tc.env))
		var ce *plugin.ConfigError
		require.ErrorAs(t, err, &ce, "%v", tc.env)
		assert.Equal(t, tc.variable, ce.Variable)
		assert.Contains(t, ce.Problem, tc.problem)
		assert.NotContains(t, err.Error(), "Plugin", "the Go field path is not shown")
	}
}

// TestLoadEnvCodeWins: values a program sets before LoadEnv are kept over the
// environment and over the defaults; the fields it left zero come from the
// environment or the defaults.
func TestLoadEnvCodeWins(t *testing.T) {
	t.Parallel()
	cfg := plugin.Config{Autopost: plugin.AutopostV0, AutopostInterval: 20 * time.Minute, StateDir: "/from/code"}
	require.NoError(t, plugin.LoadEnv(context.Background(), &cfg, envconfig.MapLookuper(map[string]string{
		"TOPGG_AUTOPOST":           "off",
		"TOPGG_AUTOPOST_INTERVAL":  "1h",
		"TOPGG_STATE_DIR":          "/from/env",
		"TOPGG_VOTE_POLL_INTERVAL": "5m",
	})))
	assert.Equal(t, plugin.Config{
		Autopost:         plugin.AutopostV0,
		AutopostInterval: 20 * time.Minute,
		SyncCommands:     true,
		VotePollInterval: 5 * time.Minute,
		VoteLookback:     12 * time.Hour,
		StateDir:         "/from/code",
	}, cfg)
	require.NoError(t, cfg.Validate())
}

// secretConfig has token- and secret-like variables of types whose parsing
// can fail.
type secretConfig struct {
	APIToken      int           `env:"SERVICE_TOKEN"`
	WebhookSecret time.Duration `env:"WEBHOOK_SECRET"`
}

// TestLoadEnvNeverEchoesSecrets: a malformed token-like value is named by its
// variable, and its value appears nowhere in the error.
func TestLoadEnvNeverEchoesSecrets(t *testing.T) {
	t.Parallel()
	for _, variable := range []string{"SERVICE_TOKEN", "WEBHOOK_SECRET"} {
		const value = "tok-3f9a77c1-do-not-print"
		var c secretConfig
		err := plugin.LoadEnv(context.Background(), &c, envconfig.MapLookuper(map[string]string{variable: value}))
		var ce *plugin.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, variable, ce.Variable)
		assert.Equal(t, variable+": is malformed", err.Error())
		assert.NotContains(t, err.Error(), "3f9a77c1")
		assert.NotContains(t, ce.Problem, "3f9a77c1")
	}
}

// TestLoadEnvBadTarget: a target go-envconfig cannot fill is an error, not a
// *ConfigError (no variable is to blame).
func TestLoadEnvBadTarget(t *testing.T) {
	t.Parallel()
	err := plugin.LoadEnv(context.Background(), plugin.Config{}, envconfig.MapLookuper(nil))
	require.Error(t, err)
	var ce *plugin.ConfigError
	assert.False(t, errors.As(err, &ce))
}

// TestLoadConfigProcessEnvironment: a nil lookuper reads the process
// environment. It cannot run in parallel (t.Setenv).
func TestLoadConfigProcessEnvironment(t *testing.T) {
	t.Setenv("TOPGG_AUTOPOST", "off")
	t.Setenv("TOPGG_VOTE_POLL_INTERVAL", "2m")
	cfg, err := plugin.LoadConfig(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, plugin.AutopostOff, cfg.Autopost)
	assert.Equal(t, 2*time.Minute, cfg.VotePollInterval)

	t.Setenv("TOPGG_VOTE_POLL_INTERVAL", "sometimes")
	_, err = plugin.LoadConfig(context.Background(), nil)
	var ce *plugin.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_VOTE_POLL_INTERVAL", ce.Variable)
}

// TestNewValidates: New refuses an invalid Config with the *ConfigError, and
// a nil client.
func TestNewValidates(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	_, err = plugin.New(client, plugin.Config{Autopost: "sometimes"})
	var ce *plugin.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_AUTOPOST", ce.Variable)

	_, err = plugin.New(nil, plugin.Config{Autopost: plugin.AutopostOff})
	require.Error(t, err)

	p, err := plugin.New(client, plugin.Config{Autopost: plugin.AutopostOff})
	require.NoError(t, err, "every job off is a valid, if idle, plugin")
	require.NoError(t, p.Close())
}

// TestNewWarnsShortPollInterval: a vote poll interval below 10 s is allowed
// (tests use them) but logged as a warning; 10 s and off are not.
func TestNewWarnsShortPollInterval(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	for _, tc := range []struct {
		interval time.Duration
		warned   bool
	}{
		{time.Second, true},
		{9999 * time.Millisecond, true},
		{10 * time.Second, false},
		{time.Minute, false},
		{0, false},
	} {
		var logs logBuffer
		cfg := plugin.Config{Autopost: plugin.AutopostOff, VotePollInterval: tc.interval, VoteLookback: time.Hour, StateDir: t.TempDir()}
		p, err := plugin.New(client, cfg, plugin.WithLogger(logs.Logger()))
		require.NoError(t, err, "%s is valid", tc.interval)
		require.NoError(t, p.Close())
		if tc.warned {
			assert.Contains(t, logs.String(), `level=WARN msg="vote poll interval is below 10 seconds`, "%s", tc.interval)
			assert.Contains(t, logs.String(), "interval="+tc.interval.String())
		} else {
			assert.Empty(t, logs.String(), "%s", tc.interval)
		}
	}
}

// TestLoadEnvZeroValueRule pins the rule documented on Config and LoadEnv: a
// zero field set in code counts as unset (so it cannot turn a job off before
// loading), a non-zero one keeps its value and its variable is not even read,
// and a job is turned off in code by setting the field after loading.
func TestLoadEnvZeroValueRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("zero before loading takes the default", func(t *testing.T) {
		t.Parallel()
		cfg := plugin.Config{SyncCommands: false, VotePollInterval: 0}
		require.NoError(t, plugin.LoadEnv(ctx, &cfg, envconfig.MapLookuper(nil)))
		assert.True(t, cfg.SyncCommands)
		assert.Equal(t, time.Minute, cfg.VotePollInterval)
	})

	t.Run("zero before loading takes the variable", func(t *testing.T) {
		t.Parallel()
		cfg := plugin.Config{}
		require.NoError(t, plugin.LoadEnv(ctx, &cfg, envconfig.MapLookuper(map[string]string{
			"TOPGG_SYNC_COMMANDS": "false", "TOPGG_VOTE_POLL_INTERVAL": "0",
		})))
		assert.False(t, cfg.SyncCommands)
		assert.Zero(t, cfg.VotePollInterval)
	})

	t.Run("non-zero in code: variable not read", func(t *testing.T) {
		t.Parallel()
		cfg := plugin.Config{Autopost: plugin.AutopostOff, SyncCommands: true, VotePollInterval: 2 * time.Minute}
		require.NoError(t, plugin.LoadEnv(ctx, &cfg, envconfig.MapLookuper(map[string]string{
			"TOPGG_AUTOPOST": "v2", "TOPGG_SYNC_COMMANDS": "maybe", "TOPGG_VOTE_POLL_INTERVAL": "often",
		})), "malformed values of fields set in code are not read")
		assert.Equal(t, plugin.AutopostOff, cfg.Autopost)
		assert.True(t, cfg.SyncCommands)
		assert.Equal(t, 2*time.Minute, cfg.VotePollInterval)
	})

	t.Run("off after loading", func(t *testing.T) {
		t.Parallel()
		var cfg plugin.Config
		require.NoError(t, plugin.LoadEnv(ctx, &cfg, envconfig.MapLookuper(map[string]string{
			"TOPGG_SYNC_COMMANDS": "true", "TOPGG_VOTE_POLL_INTERVAL": "5m",
		})))
		require.Equal(t, 5*time.Minute, cfg.VotePollInterval)
		cfg.SyncCommands, cfg.VotePollInterval = false, 0
		assert.NoError(t, cfg.Validate(), "jobs turned off after loading are a valid Config")
	})
}
