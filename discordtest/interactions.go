package discordtest

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// InteractionSpec describes one use of a slash command, for Interact.
type InteractionSpec struct {
	// Command is the name of a registered command (required): the guild's
	// commands are searched first, then the global ones.
	Command string
	// GuildID is the guild the command is used in; empty means a DM with
	// the bot (the interaction then carries "user" instead of "member" and
	// goes to shard 0, as on Discord).
	GuildID string
	// ChannelID defaults to the guild's ID (its first text channel) or, in
	// a DM, a new ID.
	ChannelID string
	// UserID is the user who used the command (required).
	UserID string
	// Username defaults to "user-" + UserID.
	Username string
	// Options are the command's options as the client sends them.
	Options []*discordgo.ApplicationCommandInteractionDataOption
}

// ReplyKind says how the bot answered an interaction.
type ReplyKind string

// Kinds of InteractionReply.
const (
	// ReplyCallback is POST /interactions/{id}/{token}/callback.
	ReplyCallback ReplyKind = "callback"
	// ReplyEdit is PATCH /webhooks/{app}/{token}/messages/@original.
	ReplyEdit ReplyKind = "edit"
	// ReplyFollowup is POST /webhooks/{app}/{token}.
	ReplyFollowup ReplyKind = "followup"
)

// InteractionReply is one answer the bot gave to an interaction made by
// Interact.
type InteractionReply struct {
	InteractionID string
	Kind          ReplyKind
	// Type is the callback type (ReplyCallback only).
	Type discordgo.InteractionResponseType
	// Content is the message content (data.content for a callback).
	Content string
	// Flags are the message flags (e.g. discordgo.MessageFlagsEphemeral).
	Flags discordgo.MessageFlags
	// Body is the JSON the bot sent (payload_json for a multipart request).
	Body json.RawMessage
}

// interactionState is an interaction the Server dispatched.
type interactionState struct {
	id, token, guildID, channelID string
	acknowledged                  bool
	originalMessageID             string
}

// Interact dispatches INTERACTION_CREATE (type APPLICATION_COMMAND) for a
// registered command to the session of the guild's shard, and returns the
// interaction's ID and token: the bot answers on
// /interactions/{id}/{token}/callback, and WaitInteractionReply shows the
// answer. It fails with ErrUnknownCommand,
// ErrUnknownGuild, ErrGuildUnavailable, ErrShardNotConnected,
// ErrInvalidSnowflake (all wrapped) or the context's error.
func (s *Server) Interact(ctx context.Context, spec InteractionSpec) (id, token string, err error) {
	if err := ctx.Err(); err != nil {
		return "", "", fmt.Errorf("discordtest: interact: %w", err)
	}
	if err := spec.check(); err != nil {
		return "", "", fmt.Errorf("discordtest: interact: %w", err)
	}
	username := spec.Username
	if username == "" {
		username = "user-" + spec.UserID
	}

	s.mu.Lock()
	shard, err := s.guildShardLocked(spec.GuildID)
	if err != nil {
		s.mu.Unlock()
		return "", "", fmt.Errorf("discordtest: interact: %w", err)
	}
	cmd, scope, ok := s.lookupCommandLocked(spec.GuildID, spec.Command)
	if !ok {
		s.mu.Unlock()
		return "", "", fmt.Errorf("discordtest: interact: /%s: %w", spec.Command, ErrUnknownCommand)
	}
	sess, err := s.connectedLocked(shard)
	if err != nil {
		s.mu.Unlock()
		return "", "", fmt.Errorf("discordtest: interact: %w", err)
	}
	it := &interactionState{id: s.nextIDLocked(), token: randomHex(32), guildID: spec.GuildID, channelID: spec.ChannelID}
	if it.channelID == "" {
		it.channelID = spec.GuildID
		if it.channelID == "" {
			it.channelID = s.nextIDLocked()
		}
	}
	s.interactions[it.id] = it
	payload := s.interactionPayloadLocked(it, cmd, scope, spec, username)
	s.mu.Unlock()

	s.log.Debug("interaction", "command", spec.Command, "guild", spec.GuildID, "shard", shard)
	if err := sess.dispatch(ctx, "INTERACTION_CREATE", payload); err != nil {
		return "", "", fmt.Errorf("discordtest: interact: %w", err)
	}
	return it.id, it.token, nil
}

// check returns what is wrong with spec before any lookup: no command name
// (ErrUnknownCommand), or an id that is not a snowflake (the user's is
// required; the guild's and channel's may be empty).
func (spec InteractionSpec) check() error {
	if spec.Command == "" {
		return fmt.Errorf("empty command name: %w", ErrUnknownCommand)
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

// guildShardLocked returns the shard of the guild an interaction comes from
// (0 for a DM, guildID empty), or ErrUnknownGuild or ErrGuildUnavailable. The
// caller holds s.mu.
func (s *Server) guildShardLocked(guildID string) (int, error) {
	if guildID == "" {
		return 0, nil
	}
	g, ok := s.guilds[guildID]
	switch {
	case !ok:
		return 0, fmt.Errorf("guild %s: %w", guildID, ErrUnknownGuild)
	case g.unavailable:
		return 0, fmt.Errorf("guild %s: %w", guildID, ErrGuildUnavailable)
	}
	return g.shard, nil
}

// interactionPayloadLocked builds the INTERACTION_CREATE object. The caller
// holds s.mu.
func (s *Server) interactionPayloadLocked(it *interactionState, cmd commandRecord, scope string,
	spec InteractionSpec, username string) map[string]any {
	data := map[string]any{"id": cmd.id, "name": cmd.name, "type": cmd.typ}
	if scope != "" {
		data["guild_id"] = scope
	}
	if len(spec.Options) > 0 {
		data["options"] = spec.Options
	}
	user := map[string]any{
		"id": spec.UserID, "username": username, "global_name": username,
		"discriminator": "0", "avatar": nil, "public_flags": 0,
	}
	p := map[string]any{
		"id":              it.id,
		"application_id":  s.cfg.appID,
		"type":            discordgo.InteractionApplicationCommand,
		"data":            data,
		"channel_id":      it.channelID,
		"token":           it.token,
		"version":         1,
		"locale":          "en-US",
		"app_permissions": "0",
		"entitlements":    []any{},
	}
	if spec.GuildID == "" {
		p["user"] = user
		p["context"] = discordgo.InteractionContextBotDM
		return p
	}
	p["guild_id"] = spec.GuildID
	p["guild_locale"] = "en-US"
	p["context"] = discordgo.InteractionContextGuild
	p["authorizing_integration_owners"] = map[string]string{"0": spec.GuildID}
	p["member"] = map[string]any{
		"user":                         user,
		"roles":                        s.memberRolesLocked(spec.GuildID, spec.UserID),
		"joined_at":                    s.started.Format(time.RFC3339Nano),
		"nick":                         nil,
		"avatar":                       nil,
		"premium_since":                nil,
		"communication_disabled_until": nil,
		"deaf":                         false,
		"mute":                         false,
		"pending":                      false,
		"flags":                        0,
		"permissions":                  "0",
	}
	return p
}

// replyBody is the part of a callback or message body the fake reads.
type replyBody struct {
	Type discordgo.InteractionResponseType `json:"type"`
	Data *messageBody                      `json:"data"`
}

type messageBody struct {
	Content     *string                `json:"content"`
	Flags       discordgo.MessageFlags `json:"flags"`
	Embeds      []json.RawMessage      `json:"embeds"`
	Components  []json.RawMessage      `json:"components"`
	Attachments []json.RawMessage      `json:"attachments"`
	Poll        json.RawMessage        `json:"poll"`
}

func (m *messageBody) content() string {
	if m == nil || m.Content == nil {
		return ""
	}
	return *m.Content
}

// empty reports whether a message would have nothing to show.
func (m *messageBody) empty() bool {
	return m == nil || (m.content() == "" && len(m.Embeds) == 0 && len(m.Components) == 0 &&
		len(m.Attachments) == 0 && len(m.Poll) == 0)
}

// readPayload returns the JSON of a request: the body, or the payload_json
// part of a multipart body (files are ignored). hasFiles tells whether other
// parts came with it.
func readPayload(r *http.Request) (payload []byte, hasFiles bool, err error) {
	body, err := io.ReadAll(r.Body) // bounded by restHandler
	if err != nil {
		return nil, false, err
	}
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType != "multipart/form-data" {
		return body, false, nil
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, err
		}
		if part.FormName() == "payload_json" {
			if payload, err = io.ReadAll(part); err != nil {
				return nil, false, err
			}
			continue
		}
		hasFiles = true
	}
	if payload == nil {
		return nil, false, errors.New("no payload_json part")
	}
	return payload, hasFiles, nil
}

func badJSON(w http.ResponseWriter, err error) {
	invalidForm(w, map[string]any{"_errors": []map[string]string{{"code": "BASE_TYPE_BAD_JSON", "message": err.Error()}}})
}

func emptyMessage(w http.ResponseWriter) {
	writeError(w, http.StatusBadRequest, codeEmptyMessage, "Cannot send an empty message")
}

// interactionCallback answers POST /interactions/{id}/{token}/callback:
// 204 once per interaction for types 4 (message), 5 (deferred) and 9
// (modal); 404 Unknown interaction for a wrong ID or token; 400 for a
// second callback, another type or an empty message.
func (s *Server) interactionCallback(w http.ResponseWriter, r *http.Request) {
	payload, hasFiles, err := readPayload(r)
	if err != nil {
		badJSON(w, err)
		return
	}
	var body replyBody
	if err := json.Unmarshal(payload, &body); err != nil {
		badJSON(w, err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.interactions[r.PathValue("id")]
	if it == nil || subtle.ConstantTimeCompare([]byte(it.token), []byte(r.PathValue("token"))) != 1 {
		writeError(w, http.StatusNotFound, codeUnknownInteraction, "Unknown interaction")
		return
	}
	if it.acknowledged {
		writeError(w, http.StatusBadRequest, codeAlreadyAcknowledged, "Interaction has already been acknowledged.")
		return
	}
	switch body.Type {
	case discordgo.InteractionResponseChannelMessageWithSource:
		if !hasFiles && body.Data.empty() {
			emptyMessage(w)
			return
		}
	case discordgo.InteractionResponseDeferredChannelMessageWithSource, discordgo.InteractionResponseModal:
	default:
		invalidForm(w, map[string]any{"type": map[string]any{"_errors": []map[string]string{{
			"code": "INTERACTION_RESPONSE_TYPE_INVALID", "message": "Interaction response type is not valid for an application command",
		}}}})
		return
	}
	it.acknowledged = true
	it.originalMessageID = s.nextIDLocked()
	reply := InteractionReply{InteractionID: it.id, Kind: ReplyCallback, Type: body.Type, Body: payload}
	if body.Data != nil {
		reply.Content, reply.Flags = body.Data.content(), body.Data.Flags
	}
	s.replies = append(s.replies, reply)
	s.notifyLocked()
	w.WriteHeader(http.StatusNoContent)
}

// webhookInteractionLocked finds the acknowledged interaction behind
// /webhooks/{app}/{token}; Discord knows no such webhook before the
// callback. The caller holds s.mu.
func (s *Server) webhookInteractionLocked(w http.ResponseWriter, r *http.Request) (*interactionState, bool) {
	if r.PathValue("app") == s.cfg.appID {
		token := []byte(r.PathValue("token"))
		for _, it := range s.interactions {
			if subtle.ConstantTimeCompare([]byte(it.token), token) == 1 && it.acknowledged {
				return it, true
			}
		}
	}
	writeError(w, http.StatusNotFound, codeUnknownWebhook, "Unknown Webhook")
	return nil, false
}

// messageLocked is the message object Discord returns for a reply.
func (s *Server) messageLocked(it *interactionState, id string, msgType int, m *messageBody) map[string]any {
	embeds := []json.RawMessage{}
	if m != nil && m.Embeds != nil {
		embeds = m.Embeds
	}
	var flags discordgo.MessageFlags
	if m != nil {
		flags = m.Flags
	}
	return map[string]any{
		"id":               id,
		"type":             msgType,
		"channel_id":       it.channelID,
		"content":          m.content(),
		"author":           s.botUser(),
		"timestamp":        time.Now().UTC().Format(time.RFC3339Nano),
		"edited_timestamp": nil,
		"tts":              false,
		"mention_everyone": false,
		"mentions":         []any{},
		"mention_roles":    []any{},
		"attachments":      []any{},
		"embeds":           embeds,
		"components":       []any{},
		"pinned":           false,
		"flags":            flags,
		"webhook_id":       s.cfg.appID,
		"application_id":   s.cfg.appID,
	}
}

// readMessage reads a webhook message body (JSON or multipart), answering 400
// itself when it is malformed.
func readMessage(w http.ResponseWriter, r *http.Request) (payload []byte, hasFiles bool, m *messageBody, ok bool) {
	payload, hasFiles, err := readPayload(r)
	if err != nil {
		badJSON(w, err)
		return nil, false, nil, false
	}
	m = new(messageBody)
	if err := json.Unmarshal(payload, m); err != nil {
		badJSON(w, err)
		return nil, false, nil, false
	}
	return payload, hasFiles, m, true
}

// followup answers POST /webhooks/{app}/{token}: 200 with the message when
// ?wait=true, else 204.
func (s *Server) followup(w http.ResponseWriter, r *http.Request) {
	payload, hasFiles, m, ok := readMessage(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.webhookInteractionLocked(w, r)
	if !ok {
		return
	}
	if !hasFiles && m.empty() {
		emptyMessage(w)
		return
	}
	s.replies = append(s.replies, InteractionReply{
		InteractionID: it.id, Kind: ReplyFollowup, Content: m.content(), Flags: m.Flags, Body: payload,
	})
	s.notifyLocked()
	if strings.EqualFold(r.URL.Query().Get("wait"), "true") {
		writeJSON(w, http.StatusOK, s.messageLocked(it, s.nextIDLocked(), 0, m))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// editOriginal answers PATCH /webhooks/{app}/{token}/messages/@original
// with the edited message.
func (s *Server) editOriginal(w http.ResponseWriter, r *http.Request) {
	payload, _, m, ok := readMessage(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.webhookInteractionLocked(w, r)
	if !ok {
		return
	}
	s.replies = append(s.replies, InteractionReply{
		InteractionID: it.id, Kind: ReplyEdit, Content: m.content(), Flags: m.Flags, Body: payload,
	})
	s.notifyLocked()
	const chatInputCommandMessage = 20
	writeJSON(w, http.StatusOK, s.messageLocked(it, it.originalMessageID, chatInputCommandMessage, m))
}

// interactionReplies returns every answer the bot gave to interactions, in
// arrival order.
func (s *Server) interactionReplies() []InteractionReply {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.replies)
	for i := range out {
		out[i].Body = slices.Clone(out[i].Body)
	}
	return out
}

// WaitInteractionReply blocks until the bot has answered interaction
// interactionID (its first answer is returned, normally the callback), the
// context is done (its error) or the Server is closed (ErrClosed).
func (s *Server) WaitInteractionReply(ctx context.Context, interactionID string) (InteractionReply, error) {
	var found InteractionReply
	err := s.waitFor(ctx, func() bool {
		for _, r := range s.replies {
			if r.InteractionID == interactionID {
				found = r
				found.Body = slices.Clone(r.Body)
				return true
			}
		}
		return false
	})
	if err != nil {
		return InteractionReply{}, fmt.Errorf("discordtest: wait for reply to %s: %w", interactionID, err)
	}
	return found, nil
}
