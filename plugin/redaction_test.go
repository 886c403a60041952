package plugin_test

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// A *Plugin printed whole (a careless log line) shows no webhook secret: fmt
// prints unexported fields by reflection, without the secrets' own redaction.
func TestPrintedPluginHoldsNoWebhookSecret(t *testing.T) {
	t.Parallel()
	c, err := topgg.New("x.y.z")
	require.NoError(t, err)
	cfg := plugin.Config{
		Autopost: "off", SyncCommands: new(false), VotePollInterval: new(time.Minute),
		WebhookSecrets: plugin.WebhookSecrets{"whs_v1SEKRIT"}, WebhookAuth: "v0SEKRIT",
	}
	p, err := plugin.New(c, cfg, plugin.WithLogger(slog.New(slog.DiscardHandler)), plugin.WithState(voterewards.NewMemoryStore()))
	require.NoError(t, err)
	// With a session attached, the bot token must not show either: fmt
	// prints a *discordgo.Session reached under %s, %q, %d or %x in full.
	const botToken = "MTIzNDU2Nzg5MDEyMzQ1Njc4.BOTSEKRIT.token"
	s, err := discordgo.New("Bot " + botToken)
	require.NoError(t, err)
	require.NoError(t, p.Attach(s))
	out := testlog.PrintAll(p)
	assert.Contains(t, out, "plugin.Plugin{shards attached: [0]")
	assert.NotContains(t, out, "SEKRIT")
	assert.NotContains(t, out, fmt.Sprintf("%x", "v0SEKRIT"))
	assert.NotContains(t, out, fmt.Sprintf("%x", "BOTSEKRIT"))
	for _, z := range []*plugin.Plugin{nil, {}} {
		for _, verb := range []string{"%v", "%s", "%d", "%x"} {
			assert.Equal(t, "plugin.Plugin(not made by plugin.New)", fmt.Sprintf(verb, z))
		}
	}
	_, err = p.WebhookHandler()
	assert.NoError(t, err, "the receiver is still on")
}
