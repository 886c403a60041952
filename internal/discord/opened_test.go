package discord_test

import (
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/discord"
)

// TestOpened: a new session is not opened; one that had its READY is, during
// its life and after Close (its next Open resumes, with no READY).
func TestOpened(t *testing.T) {
	t.Parallel()
	assert.False(t, discord.Opened(nil))
	assert.False(t, discord.Opened(&discordgo.Session{}), "a session without State has never been opened")

	srv, err := discordtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	s, err := srv.NewSession(0, 1)
	require.NoError(t, err)
	s.ShouldReconnectOnError = false
	assert.False(t, discord.Opened(s))
	require.NoError(t, s.Open())
	assert.True(t, discord.Opened(s))
	require.NoError(t, s.Close())
	assert.True(t, discord.Opened(s), "a closed session was opened before")
}
