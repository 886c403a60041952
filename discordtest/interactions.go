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
	Type    discordgo.InteractionResponseType // the callback type
	Content string                            // data.content
	Flags   discordgo.MessageFlags            // e.g. discordgo.MessageFlagsEphemeral
	Body    json.RawMessage                   // the JSON the bot sent
}

// interactionState is an interaction the Server dispatched.
type interactionState struct {
	token string
	reply *InteractionReply // nil until the bot answers
}

// commandData is an INTERACTION_CREATE's data, with the command's guild
// that discordgo does not read.
type commandData struct {
	discordgo.ApplicationCommandInteractionData
	GuildID string `json:"guild_id,omitempty"`
}

// Interact dispatches INTERACTION_CREATE for a registered command to the guild's
// shard and returns the interaction's ID and token ([Server.WaitInteractionReply]
// shows the answer). It fails for an unknown command or guild, or a shard not connected.
func (s *Server) Interact(ctx context.Context, spec InteractionSpec) (id, token string, err error) {
	s.mu.Lock()
	sess, it, err := s.newInteractionLocked(ctx, spec)
	s.mu.Unlock()
	if err == nil {
		err = sess.dispatch(ctx, "INTERACTION_CREATE", it)
	}
	if err != nil {
		return "", "", fmt.Errorf("discordtest: interact: %w", err)
	}
	return it.ID, it.Token, nil
}

// newInteractionLocked records the interaction spec describes and returns
// the session to send it to and the interaction. The caller holds s.mu.
func (s *Server) newInteractionLocked(ctx context.Context, spec InteractionSpec) (*gwSession, *discordgo.Interaction, error) {
	g, shard := s.guilds[spec.GuildID], 0 // a DM goes to shard 0
	switch err := cmp.Or(ctx.Err(), spec.check()); {
	case err != nil:
		return nil, nil, err
	case spec.GuildID == "":
	case g == nil:
		return nil, nil, fmt.Errorf("guild %s: %w", spec.GuildID, errUnknownGuild)
	case g.unavailable:
		return nil, nil, fmt.Errorf("guild %s: %w", spec.GuildID, errGuildUnavailable)
	default:
		shard = g.shard
	}
	cmd, scope, ok := s.lookupCommandLocked(spec.GuildID, spec.Command)
	if !ok {
		return nil, nil, fmt.Errorf("/%s: %w", spec.Command, errUnknownCommand)
	}
	sess, err := s.connectedLocked(shard)
	if err != nil {
		return nil, nil, err
	}
	username := cmp.Or(spec.Username, "user-"+spec.UserID)
	user := &discordgo.User{ID: spec.UserID, Username: username, GlobalName: username, Discriminator: "0"}
	it := &discordgo.Interaction{
		ID: s.nextIDLocked(), AppID: s.cfg.appID, Type: discordgo.InteractionApplicationCommand,
		Data: commandData{discordgo.ApplicationCommandInteractionData{
			ID: cmd.ID, Name: cmd.Name, CommandType: cmd.Type, Options: spec.Options}, scope},
		ChannelID: cmp.Or(spec.ChannelID, spec.GuildID), Token: rand.Text() + rand.Text(), Version: 1,
		Locale: discordgo.EnglishUS, Context: discordgo.InteractionContextBotDM, User: user,
	}
	if it.ChannelID == "" {
		it.ChannelID = s.nextIDLocked()
	}
	if spec.GuildID != "" {
		locale := discordgo.EnglishUS
		it.GuildID, it.GuildLocale, it.Context, it.User = spec.GuildID, &locale, discordgo.InteractionContextGuild, nil
		it.Member = &discordgo.Member{User: user, Roles: s.memberRolesLocked(spec.GuildID, spec.UserID), JoinedAt: s.started}
	}
	s.interactions[it.ID] = &interactionState{token: it.Token}
	return sess, it, nil
}

// check returns what is wrong with spec before any lookup.
func (spec InteractionSpec) check() error {
	if spec.Command == "" {
		return fmt.Errorf("empty command name: %w", errUnknownCommand)
	}
	for _, v := range [][2]string{{"user", spec.UserID}, {"guild", spec.GuildID}, {"channel", spec.ChannelID}} {
		if _, err := parseSnowflake(v[1]); err != nil && (v[1] != "" || v[0] == "user") {
			return fmt.Errorf("%s: %w", v[0], err) // only the user is required
		}
	}
	return nil
}

// replyBody is the part of a callback body the fake reads.
type replyBody struct {
	Type discordgo.InteractionResponseType `json:"type"`
	Data *messageBody                      `json:"data"`
}

type messageBody struct {
	Content      string                 `json:"content"`
	Flags        discordgo.MessageFlags `json:"flags"`
	Embeds       []json.RawMessage      `json:"embeds"`
	Components   []json.RawMessage      `json:"components"`
	Attachments  []json.RawMessage      `json:"attachments"`
	Poll         json.RawMessage        `json:"poll"`
	Nonce        json.RawMessage        `json:"nonce"` // with EnforceNonce, see sendDMLocked
	EnforceNonce bool                   `json:"enforce_nonce"`
}

// empty reports whether a message would have nothing to show.
func (m *messageBody) empty() bool {
	return m == nil || (m.Content == "" && len(m.Embeds) == 0 && len(m.Components) == 0 &&
		len(m.Attachments) == 0 && len(m.Poll) == 0)
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
	message := body.Type == discordgo.InteractionResponseChannelMessageWithSource
	switch {
	case it == nil || subtle.ConstantTimeCompare([]byte(it.token), []byte(r.PathValue("token"))) != 1:
		writeError(w, http.StatusNotFound, 10062, "Unknown interaction")
	case it.reply != nil:
		writeError(w, http.StatusBadRequest, 40060, "Interaction has already been acknowledged.")
	case message && body.Data.empty():
		writeError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
	case !message && body.Type != discordgo.InteractionResponseDeferredChannelMessageWithSource &&
		body.Type != discordgo.InteractionResponseModal:
		invalidForm(w, "type", "INTERACTION_RESPONSE_TYPE_INVALID", "Interaction response type is not valid for an application command")
	default:
		it.reply = &InteractionReply{Type: body.Type, Body: payload}
		if body.Data != nil {
			it.reply.Content, it.reply.Flags = body.Data.Content, body.Data.Flags
		}
		s.notifyLocked()
		w.WriteHeader(http.StatusNoContent)
	}
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
