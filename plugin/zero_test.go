package plugin_test

import (
	"context"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
)

// A Plugin not made by New is invalid (DESIGN's zero-value policy): Attach
// panics rather than register READY handlers that block for ever on a nil
// channel, and Run panics rather than return nil having run nothing.
func TestZeroPluginPanics(t *testing.T) {
	t.Parallel()
	s, err := discordgo.New("Bot x")
	require.NoError(t, err)
	for name, p := range map[string]*plugin.Plugin{"zero": {}, "nil": nil} {
		assert.Panics(t, func() { _ = p.Attach(s) }, name)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		assert.Panics(t, func() { _ = p.Run(ctx) }, name)
		cancel()
	}
}
