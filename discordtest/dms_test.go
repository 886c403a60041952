package discordtest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
)

// TestRESTDirectMessages: discordgo's UserChannelCreate and ChannelMessageSend
// reach the fake, which keeps one DM channel per user and records each
// message; a user who blocks DMs gets nothing (403, code 50007), and a channel
// the fake never opened is 404 Unknown Channel.
func TestRESTDirectMessages(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	s := restSession(t, srv)
	ctx := testContext(t)
	const alice, bob = "4000000000000000004", "5000000000000000005"

	ch, err := s.UserChannelCreate(alice, discordgo.WithContext(ctx))
	require.NoError(t, err)
	assert.Equal(t, discordgo.ChannelTypeDM, ch.Type)
	require.Len(t, ch.Recipients, 1)
	assert.Equal(t, alice, ch.Recipients[0].ID)
	msg, err := s.ChannelMessageSend(ch.ID, "you can vote again", discordgo.WithContext(ctx))
	require.NoError(t, err)
	assert.Equal(t, "you can vote again", msg.Content)
	assert.Equal(t, ch.ID, msg.ChannelID)
	assert.Equal(t, srv.BotUserID(), msg.Author.ID)

	again, err := s.UserChannelCreate(alice)
	require.NoError(t, err)
	assert.Equal(t, ch.ID, again.ID, "one DM channel per user")
	_, err = s.ChannelMessageSend(again.ID, "second")
	require.NoError(t, err)

	got, err := srv.WaitDirectMessages(ctx, alice, 2)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, discordtest.DirectMessage{UserID: alice, ChannelID: ch.ID, MessageID: msg.ID, Content: "you can vote again"}, got[0])
	assert.Equal(t, "second", got[1].Content)

	require.NoError(t, srv.BlockDMs(bob))
	bobCh, err := s.UserChannelCreate(bob)
	require.NoError(t, err, "opening the channel succeeds even when DMs are closed, as on Discord")
	_, err = s.ChannelMessageSend(bobCh.ID, "hello")
	requireRESTError(t, err, http.StatusForbidden, 50007)

	_, err = s.ChannelMessageSend("6000000000000000006", "hello")
	requireRESTError(t, err, http.StatusNotFound, 10003)
	_, err = s.ChannelMessageSend(ch.ID, "")
	requireRESTError(t, err, http.StatusBadRequest, 50006)
	_, err = s.UserChannelCreate("not-a-snowflake")
	requireRESTError(t, err, http.StatusBadRequest, 50035)

	assert.Len(t, srv.DirectMessages(), 2, "refused messages are not recorded")
	assert.ErrorIs(t, srv.BlockDMs("x"), discordtest.ErrInvalidSnowflake)
}

// TestRESTDirectMessageFaults: the DM routes take injected faults like any
// other route.
func TestRESTDirectMessageFaults(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	s := restSession(t, srv)
	s.MaxRestRetries = 0
	require.NoError(t, srv.Inject(discordtest.Fault{Method: "POST", Path: "/channels/*", Status: http.StatusOK, Body: "{         "}))
	ch, err := s.UserChannelCreate("4000000000000000004")
	require.NoError(t, err)
	_, err = s.ChannelMessageSend(ch.ID, "hi")
	require.Error(t, err)
	assert.Empty(t, srv.DirectMessages())
	require.NoError(t, srv.Inject(discordtest.Fault{Method: "POST", Path: "/users/@me/channels", Status: http.StatusOK, Body: "{         "}))
	_, err = s.UserChannelCreate("4000000000000000004")
	require.Error(t, err)
}

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
