package discordtest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"
)

const maxMessageContentRunes = 2000

// DirectMessage is one message the bot sent to a user's DM channel
// (discordgo's UserChannelCreate, then ChannelMessageSend) and the Server
// accepted (see [Server.BlockDMs]).
type DirectMessage struct {
	UserID    string // the recipient
	ChannelID string // the same for every message to one user
	MessageID string
	Content   string
}

// dmState is the Server's DM channels and messages; guarded by Server.mu.
type dmState struct {
	channels map[string]string // user ID -> DM channel ID
	owners   map[string]string // DM channel ID -> user ID
	blocked  map[string]bool   // users who do not accept DMs from the bot
	messages []DirectMessage
	nonces   map[nonceKey]sentNonce // enforced nonces
}

// nonceWindow is how long the Server remembers an enforced nonce. Discord
// says "the past few minutes": the fake takes two, so that it never hides a
// repeat Discord would show.
const nonceWindow = 2 * time.Minute

// nonceKey is a nonce sent in one channel (the bot is the only author).
type nonceKey struct{ channel, nonce string }

// sentNonce is the message an enforced nonce created, and when.
type sentNonce struct {
	dm DirectMessage
	at time.Time
}

// openDM serves POST /users/@me/channels: the user's DM channel, created on
// first use.
func (s *Server) openDM(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RecipientID string `json:"recipient_id"`
	}
	if !decodeJSON(w, r.Body, &body) {
		return
	}
	if _, err := parseSnowflake(body.RecipientID); err != nil {
		invalidForm(w, "recipient_id", "NUMBER_TYPE_COERCE", "Value is not snowflake.")
		return
	}
	s.mu.Lock()
	id, ok := s.dms.channels[body.RecipientID]
	if !ok {
		id = s.nextIDLocked()
		s.dms.channels[body.RecipientID] = id
		s.dms.owners[id] = body.RecipientID
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "type": 1, // a DM
		"recipients": []map[string]any{{"id": body.RecipientID, "username": "user-" + body.RecipientID, "discriminator": "0"}},
	})
}

// createMessage serves POST /channels/{channel}/messages for a DM channel
// (any other is 404 Unknown Channel): 403 when the user blocks DMs, else the
// message, recorded.
func (s *Server) createMessage(w http.ResponseWriter, r *http.Request) {
	var m messageBody
	if !decodeJSON(w, r.Body, &m) {
		return
	}
	channel := r.PathValue("channel")
	s.mu.Lock()
	defer s.mu.Unlock()
	user, ok := s.dms.owners[channel]
	switch {
	case m.empty():
		writeError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
	case utf8.RuneCountInString(m.Content) > maxMessageContentRunes:
		invalidForm(w, "content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
	case !ok:
		writeError(w, http.StatusNotFound, 10003, "Unknown Channel")
	case s.dms.blocked[user]:
		writeError(w, http.StatusForbidden, 50007, "Cannot send messages to this user")
	default:
		dm := s.sendDMLocked(channel, user, &m)
		writeJSON(w, http.StatusOK, map[string]any{
			"id": dm.MessageID, "channel_id": channel, "content": dm.Content, "author": s.botUser(),
			"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00"),
		})
	}
}

// sendDMLocked records m as a message to user in channel, unless m repeats
// an enforced nonce sent there within nonceWindow: Discord answers the repeat
// with the first message and creates none. The caller holds s.mu.
func (s *Server) sendDMLocked(channel, user string, m *messageBody) DirectMessage {
	key := nonceKey{channel, string(bytes.Trim(m.Nonce, `"`))}
	enforced := m.EnforceNonce && len(m.Nonce) > 0
	if prev, ok := s.dms.nonces[key]; enforced && ok && time.Since(prev.at) <= nonceWindow {
		return prev.dm
	}
	dm := DirectMessage{UserID: user, ChannelID: channel, MessageID: s.nextIDLocked(), Content: m.Content}
	s.dms.messages = append(s.dms.messages, dm)
	if enforced {
		s.dms.nonces[key] = sentNonce{dm, time.Now()}
	}
	s.notifyLocked()
	return dm
}

// BlockDMs makes the Server refuse later messages to userID's DM channel with
// 403 and code 50007, as Discord does for closed DMs; it fails on an invalid ID.
func (s *Server) BlockDMs(userID string) error {
	if _, err := parseSnowflake(userID); err != nil {
		return fmt.Errorf("discordtest: block DMs: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dms.blocked[userID] = true
	return nil
}

// DirectMessages returns every accepted direct message, in arrival order.
func (s *Server) DirectMessages() []DirectMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.dms.messages)
}

// WaitDirectMessages blocks until the bot has sent at least n direct messages
// to userID, the context is done or the Server is closed, and
// returns that user's messages.
func (s *Server) WaitDirectMessages(ctx context.Context, userID string, n int) ([]DirectMessage, error) {
	var out []DirectMessage
	err := s.waitFor(ctx, func() bool {
		out = out[:0]
		for _, m := range s.dms.messages {
			if m.UserID == userID {
				out = append(out, m)
			}
		}
		return len(out) >= n
	})
	if err != nil {
		return nil, fmt.Errorf("discordtest: wait for %d direct messages to %s: %w", n, userID, err)
	}
	return out, nil
}
