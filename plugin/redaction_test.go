package plugin_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
)

// A *Plugin printed whole (a careless log line) shows no webhook secret: fmt
// prints unexported fields by reflection, without the secrets' own redaction.
func TestPrintedPluginHoldsNoWebhookSecret(t *testing.T) {
	t.Parallel()
	c, err := topgg.New("x.y.z")
	require.NoError(t, err)
	cfg := plugin.Config{
		Autopost: plugin.AutopostOff, SyncCommands: new(false), VotePollInterval: new(time.Minute), StateDir: t.TempDir(),
		WebhookSecrets: plugin.WebhookSecrets{"whs_v1SEKRIT"}, WebhookAuth: "v0SEKRIT",
	}
	p, err := plugin.New(c, cfg, plugin.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	var b bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		fmt.Fprintf(&b, verb+"\n", p)
	}
	slog.New(slog.NewTextHandler(&b, nil)).Info("plugin", "p", p)
	slog.New(slog.NewJSONHandler(&b, nil)).Info("plugin", "p", p)
	assert.NotContains(t, b.String(), "SEKRIT")
	assert.NotContains(t, b.String(), fmt.Sprintf("%x", "v0SEKRIT"))
	_, err = p.WebhookHandler()
	assert.NoError(t, err, "the receiver is still on")
}
