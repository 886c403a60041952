package plugin_test

import (
	"context"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
)

// A Plugin not made by New says so: its Run used to return nil at once,
// having run nothing, and its Attach registered READY handlers that blocked
// for ever on a nil channel.
func TestZeroPluginIsRefused(t *testing.T) {
	t.Parallel()
	s, err := discordgo.New("Bot x")
	require.NoError(t, err)
	for name, p := range map[string]*plugin.Plugin{"zero": {}, "nil": nil} {
		assert.ErrorIs(t, p.Attach(s), topgg.ErrNotConfigured, name)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		assert.ErrorIs(t, p.Run(ctx), topgg.ErrNotConfigured, name)
		cancel()
		_, err := p.WebhookHandler()
		assert.ErrorIs(t, err, topgg.ErrNotConfigured, name)
	}
}

// A zero fleet.Fleet is refused by WithFleet, naming it, rather than by a
// later check that names the state.
func TestWithZeroFleetIsRefused(t *testing.T) {
	t.Parallel()
	c, err := topgg.New("x.y.z")
	require.NoError(t, err)
	_, err = plugin.New(c, plugin.Config{}, plugin.WithFleet(&fleet.Fleet{}))
	assert.ErrorIs(t, err, topgg.ErrNotConfigured)
}
