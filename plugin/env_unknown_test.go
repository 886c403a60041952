package plugin_test

import (
	"testing"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
)

// TestLoadEnvRefusesAMisspelledVariable: a TOPGG_ variable nothing reads
// (TOPGG_AUTOPOST_INTERVALL) is an error naming it and the closest variable,
// never its value; the bot's own TOPGG_ fields and Env's are known.
func TestLoadEnvRefusesAMisspelledVariable(t *testing.T) {
	t.Parallel()
	var cfg plugin.Config
	err := plugin.LoadEnv(t.Context(), &cfg, envconfig.MapLookuper(map[string]string{"TOPGG_AUTOPOST_INTERVALL": "45m-secret"}))
	var ce *plugin.ConfigError
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
	var ce *plugin.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_WEBHOOK_SECRETS", ce.Variable)
	assert.Contains(t, err.Error(), "did you mean TOPGG_WEBHOOK_SECRET?")
}
