package plugin_test

import (
	"context"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestNewRefusesAHandlerItsJobNeverCalls: a handler option whose job the
// Config turns off (a reward handler with vote polling off, an OnPost with
// autopost off, a sync handler with command sync off) is a ConfigError
// naming the field and the option, as WithVoterPerks already is.
func TestNewRefusesAHandlerItsJobNeverCalls(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	handler := func(context.Context, voterewards.Vote) error { return nil }
	pollOff := plugin.Config{VotePollInterval: new(time.Duration(0))}
	for _, c := range []struct {
		option plugin.Option
		name   string
		cfg    plugin.Config
		field  string
	}{
		{plugin.WithRewardHandler(handler), "WithRewardHandler", pollOff, "plugin.Config.VotePollInterval"},
		{plugin.WithExpiryHandler(handler), "WithExpiryHandler", pollOff, "plugin.Config.VotePollInterval"},
		{plugin.WithGiveUpHandler(func(voterewards.Vote, error) {}), "WithGiveUpHandler", pollOff, "plugin.Config.VotePollInterval"},
		{plugin.WithOnPost(func(autopost.Result) {}), "WithOnPost", plugin.Config{Autopost: "off"}, "plugin.Config.Autopost"},
		{plugin.WithCommandSyncHandler(func(context.Context, commands.Result, error) {}), "WithCommandSyncHandler",
			plugin.Config{SyncCommands: new(false)}, "plugin.Config.SyncCommands"},
	} {
		_, err := plugin.New(w.client, c.cfg, plugin.WithState(w.state()), c.option)
		var ce *plugin.ConfigError
		require.ErrorAs(t, err, &ce, c.name)
		assert.Equal(t, c.field, ce.Field, c.name)
		assert.Contains(t, err.Error(), c.name+" would never be called")
	}
	_, err := plugin.New(w.client, plugin.Config{}, plugin.WithState(w.state()), plugin.WithRewardHandler(handler))
	assert.NoError(t, err, "polling on: the handler is called")
}

// TestNewRefusesAV1SecretAsTheV0Auth: a whs_ secret in WebhookAuth (every v0
// delivery would then get 403) is refused at New and by LoadEnv, naming
// WebhookSecrets as the fix, never the secret.
func TestNewRefusesAV1SecretAsTheV0Auth(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	_, err := plugin.New(w.client, plugin.Config{WebhookAuth: "whs_secretvalue"}, plugin.WithState(w.state()))
	var ce *plugin.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "plugin.Config.WebhookAuth", ce.Field)
	assert.Contains(t, err.Error(), "WebhookSecrets")
	assert.NotContains(t, err.Error(), "secretvalue")

	var cfg plugin.Config
	err = plugin.LoadEnv(t.Context(), &cfg, envconfig.MapLookuper(map[string]string{"TOPGG_WEBHOOK_AUTH": "whs_secretvalue"}))
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "TOPGG_WEBHOOK_AUTH", ce.Variable)
	assert.Contains(t, err.Error(), "TOPGG_WEBHOOK_SECRET")
}
