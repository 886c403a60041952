package plugin_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
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
	// With a session attached, the bot token must not show either: fmt
	// prints a *discordgo.Session reached under %s, %q, %d or %x in full.
	const botToken = "MTIzNDU2Nzg5MDEyMzQ1Njc4.BOTSEKRIT.token"
	s, err := discordgo.New("Bot " + botToken)
	require.NoError(t, err)
	require.NoError(t, p.Attach(s))
	var b bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T", "%p"} {
		fmt.Fprintf(&b, verb+"\n", p)
	}
	assert.Contains(t, b.String(), "plugin.Plugin{shards attached: [0]")
	slog.New(slog.NewTextHandler(&b, nil)).Info("plugin", "p", p)
	slog.New(slog.NewJSONHandler(&b, nil)).Info("plugin", "p", p)
	assert.NotContains(t, b.String(), "SEKRIT")
	assert.NotContains(t, b.String(), fmt.Sprintf("%x", "v0SEKRIT"))
	assert.NotContains(t, b.String(), fmt.Sprintf("%x", "BOTSEKRIT"))
	for _, z := range []*plugin.Plugin{nil, {}} {
		for _, verb := range []string{"%v", "%s", "%d", "%x"} {
			assert.Equal(t, "plugin.Plugin(not made by plugin.New)", fmt.Sprintf(verb, z))
		}
	}
	_, err = p.WebhookHandler()
	assert.NoError(t, err, "the receiver is still on")
}
