package discordtest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"
)

// InteractionSpec describes one use of a slash command, for Interact.
type InteractionSpec struct {
	// Command is the name of a registered command (required), looked up in
	// the guild's commands, then the global ones.
	Command string
	// GuildID is where the command is used; empty means a DM with the bot
	// (the interaction carries "user", not "member", and goes to shard 0).
	GuildID   string
	ChannelID string // default: the guild's ID, or a new ID in a DM
	UserID    string // required
	Username  string // default "user-" + UserID
	Options   []*discordgo.ApplicationCommandInteractionDataOption
}

// InteractionReply is the bot's callback (POST
// /interactions/{id}/{token}/callback) to an interaction made by Interact.
type InteractionReply struct {
	// Type is the callback type.
	Type discordgo.InteractionResponseType
	// Content is data.content.
	Content string
	// Flags are the message flags (e.g. discordgo.MessageFlagsEphemeral).
	Flags discordgo.MessageFlags
	// Body is the JSON the bot sent.
	Body json.RawMessage
}

// interactionState is an interaction the Server dispatched.
type interactionState struct {
	id, token, guildID, channelID string
	reply                         *InteractionReply // nil until the bot answers
}

// Interact dispatches INTERACTION_CREATE for a registered command to the guild's
// shard and returns the interaction's ID and token ([Server.WaitInteractionReply]
// shows the answer). It fails for an unknown command or guild, or a shard not connected.
func (s *Server) Interact(ctx context.Context, spec InteractionSpec) (id, token string, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("discordtest: interact: %w", err)
		}
	}()
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	if err := spec.check(); err != nil {
		return "", "", err
	}
	s.mu.Lock()
	it, sess, payload, err := s.newInteractionLocked(spec)
	s.mu.Unlock()
	if err != nil {
		return "", "", err
	}
	if err := sess.dispatch(ctx, "INTERACTION_CREATE", payload); err != nil {
		return "", "", err
	}
	return it.id, it.token, nil
}

// newInteractionLocked records the interaction spec describes and returns
// it, the session to send it to and its payload. The caller holds s.mu.
func (s *Server) newInteractionLocked(spec InteractionSpec) (*interactionState, *gwSession, map[string]any, error) {
	shard, err := s.guildShardLocked(spec.GuildID)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd, scope, ok := s.lookupCommandLocked(spec.GuildID, spec.Command)
	if !ok {
		return nil, nil, nil, fmt.Errorf("/%s: %w", spec.Command, errUnknownCommand)
	}
	sess, err := s.connectedLocked(shard)
	if err != nil {
		return nil, nil, nil, err
	}
	it := &interactionState{id: s.nextIDLocked(), token: rand.Text() + rand.Text(), guildID: spec.GuildID, channelID: spec.ChannelID}
	if it.channelID == "" {
		it.channelID = cmp.Or(spec.GuildID, s.nextIDLocked())
	}
	s.interactions[it.id] = it
	return it, sess, s.interactionPayloadLocked(it, cmd, scope, spec), nil
}

// check returns what is wrong with spec before any lookup.
func (spec InteractionSpec) check() error {
	if spec.Command == "" {
		return fmt.Errorf("empty command name: %w", errUnknownCommand)
	}
	for _, v := range []struct{ what, id string }{{"user", spec.UserID}, {"guild", spec.GuildID}, {"channel", spec.ChannelID}} {
		if v.id == "" && v.what != "user" {
			continue
		}
		if _, err := parseSnowflake(v.id); err != nil {
			return fmt.Errorf("%s: %w", v.what, err)
		}
	}
	return nil
}

// guildShardLocked returns the shard of an interaction's guild (0 for a
// DM). The caller holds s.mu.
func (s *Server) guildShardLocked(guildID string) (int, error) {
	if guildID == "" {
		return 0, nil
	}
	g, ok := s.guilds[guildID]
	switch {
	case !ok:
		return 0, fmt.Errorf("guild %s: %w", guildID, errUnknownGuild)
	case g.unavailable:
		return 0, fmt.Errorf("guild %s: %w", guildID, errGuildUnavailable)
	}
	return g.shard, nil
}

// interactionPayloadLocked is INTERACTION_CREATE's object. The caller holds
// s.mu.
func (s *Server) interactionPayloadLocked(it *interactionState, cmd *discordgo.ApplicationCommand, scope string, spec InteractionSpec) map[string]any {
	username := cmp.Or(spec.Username, "user-"+spec.UserID)
	data := map[string]any{"id": cmd.ID, "name": cmd.Name, "type": cmd.Type}
	if scope != "" {
		data["guild_id"] = scope
	}
	if len(spec.Options) > 0 {
		data["options"] = spec.Options
	}
	user := map[string]any{"id": spec.UserID, "username": username, "global_name": username, "discriminator": "0"}
	p := map[string]any{
		"id": it.id, "application_id": s.cfg.appID, "type": discordgo.InteractionApplicationCommand,
		"data": data, "channel_id": it.channelID, "token": it.token, "version": 1, "locale": "en-US",
	}
	if spec.GuildID == "" {
		p["user"] = user
		p["context"] = discordgo.InteractionContextBotDM
		return p
	}
	p["guild_id"] = spec.GuildID
	p["guild_locale"] = "en-US"
	p["context"] = discordgo.InteractionContextGuild
	p["member"] = map[string]any{
		"user": user, "roles": s.memberRolesLocked(spec.GuildID, spec.UserID),
		"joined_at": s.started.Format(time.RFC3339Nano), "permissions": "0",
	}
	return p
}

// replyBody is the part of a callback body the fake reads.
type replyBody struct {
	Type discordgo.InteractionResponseType `json:"type"`
	Data *messageBody                      `json:"data"`
}

type messageBody struct {
	Content     string                 `json:"content"`
	Flags       discordgo.MessageFlags `json:"flags"`
	Embeds      []json.RawMessage      `json:"embeds"`
	Components  []json.RawMessage      `json:"components"`
	Attachments []json.RawMessage      `json:"attachments"`
	Poll        json.RawMessage        `json:"poll"`
	// Nonce and EnforceNonce: a message sent again with the same enforced
	// nonce is not created again (dms_nonce.go).
	Nonce        json.RawMessage `json:"nonce"`
	EnforceNonce bool            `json:"enforce_nonce"`
}

// empty reports whether a message would have nothing to show.
func (m *messageBody) empty() bool {
	return m == nil || (m.Content == "" && len(m.Embeds) == 0 && len(m.Components) == 0 &&
		len(m.Attachments) == 0 && len(m.Poll) == 0)
}

func emptyMessage(w http.ResponseWriter) {
	writeError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
}

// interactionCallback answers POST /interactions/{id}/{token}/callback:
// 204 once per interaction for types 4 (message), 5 (deferred) and 9
// (modal); 404 Unknown interaction for a wrong ID or token; 400 for a
// second callback, another type or an empty message.
func (s *Server) interactionCallback(w http.ResponseWriter, r *http.Request) {
	var body replyBody
	payload, _ := io.ReadAll(r.Body) // in memory: restHandler read it
	if !decodeJSON(w, bytes.NewReader(payload), &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.interactions[r.PathValue("id")]
	if it == nil || subtle.ConstantTimeCompare([]byte(it.token), []byte(r.PathValue("token"))) != 1 {
		writeError(w, http.StatusNotFound, 10062, "Unknown interaction")
		return
	}
	if it.reply != nil {
		writeError(w, http.StatusBadRequest, 40060, "Interaction has already been acknowledged.")
		return
	}
	switch body.Type {
	case discordgo.InteractionResponseChannelMessageWithSource:
		if body.Data.empty() {
			emptyMessage(w)
			return
		}
	case discordgo.InteractionResponseDeferredChannelMessageWithSource, discordgo.InteractionResponseModal:
	default:
		invalidForm(w, "type", "INTERACTION_RESPONSE_TYPE_INVALID", "Interaction response type is not valid for an application command")
		return
	}
	it.reply = &InteractionReply{Type: body.Type, Body: payload}
	if body.Data != nil {
		it.reply.Content, it.reply.Flags = body.Data.Content, body.Data.Flags
	}
	s.notifyLocked()
	w.WriteHeader(http.StatusNoContent)
}

// WaitInteractionReply blocks until the bot has answered interaction
// interactionID, the context is done (its error) or the Server is closed.
func (s *Server) WaitInteractionReply(ctx context.Context, interactionID string) (InteractionReply, error) {
	var found InteractionReply
	err := s.waitFor(ctx, func() bool {
		if it := s.interactions[interactionID]; it != nil && it.reply != nil {
			found = *it.reply
			found.Body = slices.Clone(found.Body)
			return true
		}
		return false
	})
	if err != nil {
		return InteractionReply{}, fmt.Errorf("discordtest: wait for reply to %s: %w", interactionID, err)
	}
	return found, nil
}
