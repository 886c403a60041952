package discordtest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRESTDirectMessageEnforcedNonce: a message sent again with the same
// enforced nonce is answered with the first one and not created again, as
// Discord does; the same nonce not enforced, or another nonce, creates a new
// message.
func TestRESTDirectMessageEnforcedNonce(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	s := restSession(t, srv)
	ctx := testContext(t)
	const alice = "4000000000000000004"
	ch, err := s.UserChannelCreate(alice, discordgo.WithContext(ctx))
	require.NoError(t, err)
	send := func(nonce string, enforce bool) string {
		body := map[string]any{"content": "vote again", "nonce": nonce, "enforce_nonce": enforce}
		ep := discordgo.EndpointChannelMessages(ch.ID)
		b, err := s.RequestWithBucketID(http.MethodPost, ep, body, ep, discordgo.WithContext(ctx))
		require.NoError(t, err)
		var m discordgo.Message
		require.NoError(t, json.Unmarshal(b, &m))
		return m.ID
	}
	first := send("n1", true)
	assert.Equal(t, first, send("n1", true), "a repeat of an enforced nonce returns the first message")
	assert.NotEqual(t, first, send("n2", true))
	assert.NotEqual(t, first, send("n1", false), "a nonce not enforced is not checked")
	assert.Len(t, srv.DirectMessages(), 3)
}
