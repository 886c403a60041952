package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

const (
	unitWebhookSecret = "whs_unit_secret_5be1c0"
	unitWebhookAuth   = "unit-v0-auth-77d2"
)

// TestLoadConfigWebhook: the TOPGG_WEBHOOK_* variables reach plugin.Config,
// and polling stays on (at its default) to reconcile.
func TestLoadConfigWebhook(t *testing.T) {
	t.Parallel()
	env := validEnv("http://127.0.0.1:1")
	maps.Copy(env, map[string]string{
		"TOPGG_WEBHOOK_ADDR": ":8080", "TOPGG_WEBHOOK_PATH": "/hooks/topgg",
		"TOPGG_WEBHOOK_SECRET": unitWebhookSecret + ",whs_second", "TOPGG_WEBHOOK_AUTH": unitWebhookAuth,
	})
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
	require.NoError(t, err)
	assert.Equal(t, ":8080", cfg.Config.WebhookAddr)
	assert.Equal(t, "/hooks/topgg", cfg.Config.WebhookPath)
	assert.Equal(t, plugin.WebhookSecrets{unitWebhookSecret, "whs_second"}, cfg.Config.WebhookSecrets)
	assert.Equal(t, webhook.Secret(unitWebhookAuth), cfg.Config.WebhookAuth)
	assert.Nil(t, cfg.Config.VotePollInterval, "polling stays on at its default")
	for _, s := range []string{unitWebhookSecret, unitWebhookAuth} {
		assert.NotContains(t, fmt.Sprintf("%v %+v", cfg.Config, cfg.Config), s)
	}
}

// TestWebhookConfigErrorsExit2: each malformed webhook setting exits 2 with one
// line naming the variable, without the secrets.
func TestWebhookConfigErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		set      map[string]string
		variable string
	}{
		{"address without secret", map[string]string{"TOPGG_WEBHOOK_ADDR": ":8080"}, "TOPGG_WEBHOOK_SECRET"},
		{"address not host:port", map[string]string{"TOPGG_WEBHOOK_ADDR": "8080", "TOPGG_WEBHOOK_SECRET": unitWebhookSecret}, "TOPGG_WEBHOOK_ADDR"},
		{"address port too big", map[string]string{"TOPGG_WEBHOOK_ADDR": ":70000", "TOPGG_WEBHOOK_SECRET": unitWebhookSecret}, "TOPGG_WEBHOOK_ADDR"},
		{"address port a word", map[string]string{"TOPGG_WEBHOOK_ADDR": "localhost:http", "TOPGG_WEBHOOK_SECRET": unitWebhookSecret}, "TOPGG_WEBHOOK_ADDR"},
		{"address empty", map[string]string{"TOPGG_WEBHOOK_ADDR": "", "TOPGG_WEBHOOK_SECRET": unitWebhookSecret}, "TOPGG_WEBHOOK_ADDR"},
		{"path relative", map[string]string{"TOPGG_WEBHOOK_PATH": "hook", "TOPGG_WEBHOOK_SECRET": unitWebhookSecret}, "TOPGG_WEBHOOK_PATH"},
		{"secret empty", map[string]string{"TOPGG_WEBHOOK_SECRET": ""}, "TOPGG_WEBHOOK_SECRET"},
		{"secret with an empty item", map[string]string{"TOPGG_WEBHOOK_SECRET": unitWebhookSecret + ",,"}, "TOPGG_WEBHOOK_SECRET"},
		{"secret with a space", map[string]string{"TOPGG_WEBHOOK_SECRET": unitWebhookSecret + " x"}, "TOPGG_WEBHOOK_SECRET"},
		{"secret without whs_", map[string]string{"TOPGG_WEBHOOK_SECRET": unitWebhookSecret + "," + unitWebhookSecret[len("whs_"):]}, "TOPGG_WEBHOOK_SECRET"},
		{"auth with a newline", map[string]string{"TOPGG_WEBHOOK_AUTH": unitWebhookAuth + "\n"}, "TOPGG_WEBHOOK_AUTH"},
		{"poll off with webhooks", map[string]string{"TOPGG_WEBHOOK_SECRET": unitWebhookSecret, "TOPGG_VOTE_POLL_INTERVAL": "0"}, "TOPGG_VOTE_POLL_INTERVAL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := validEnv("http://127.0.0.1:1")
			maps.Copy(env, tc.set)
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), nil, envconfig.MapLookuper(env), &stdout, &stderr)
			assert.Equal(t, exitConfig, code)
			out := stderr.String()
			assert.Equal(t, 1, strings.Count(out, "\n"), "exactly one line: %q", out)
			assert.True(t, strings.HasPrefix(out, "example-bot: configuration: "+tc.variable+": "), "%q", out)
			for _, s := range []string{unitWebhookSecret, unitWebhookAuth, "goroutine "} {
				assert.NotContains(t, out, s)
			}
			assert.Empty(t, stdout.String())
		})
	}
}

func TestCheckWebhookAddr(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", ":8080", "127.0.0.1:0", "[::1]:443", "example.com:65535"} {
		assert.NoError(t, plugin.CheckAddr(ok), ok)
	}
	for _, bad := range []string{"8080", ":65536", ":-1", ":08080", "a b:80", "http://x:80", "::1:80"} {
		assert.Error(t, plugin.CheckAddr(bad), bad)
	}
}
