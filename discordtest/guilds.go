package discordtest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/internal/snowflake"
)

// guildState is what the fake knows of a guild the bot is in.
type guildState struct {
	id          string
	shard       int
	unavailable bool
	joinedAt    time.Time
}

// guildInfo describes a guild the bot is in, as the Server sees it.
type guildInfo struct {
	ID          string
	ShardID     int
	Unavailable bool // in an outage
}

// memberCount is the member count every fake guild reports: the bot and
// one owner.
const memberCount = 2

// botUser is the bot's user object.
func (s *Server) botUser() map[string]any {
	return map[string]any{
		"id":            s.cfg.botID,
		"username":      s.cfg.botName,
		"discriminator": "0",
		"global_name":   nil,
		"avatar":        nil,
		"bot":           true,
		"verified":      true,
		"mfa_enabled":   false,
		"flags":         0,
		"public_flags":  0,
	}
}

// guildPayloadLocked is the guild object of GUILD_CREATE. The caller holds
// s.mu.
func (s *Server) guildPayloadLocked(g *guildState) map[string]any {
	return map[string]any{
		"id":                            g.id,
		"name":                          "Guild " + g.id,
		"icon":                          nil,
		"owner_id":                      ownerID(g.id),
		"joined_at":                     g.joinedAt.Format(time.RFC3339Nano),
		"member_count":                  memberCount,
		"large":                         false,
		"unavailable":                   false,
		"verification_level":            0,
		"default_message_notifications": 0,
		"explicit_content_filter":       0,
		"mfa_level":                     0,
		"nsfw_level":                    0,
		"premium_tier":                  0,
		"preferred_locale":              "en-US",
		"features":                      []string{},
		// The @everyone role has the guild's ID.
		"roles":        []map[string]any{{"id": g.id, "name": "@everyone", "permissions": "0", "position": 0}},
		"emojis":       []any{},
		"stickers":     []any{},
		"channels":     []any{},
		"threads":      []any{},
		"members":      []any{},
		"presences":    []any{},
		"voice_states": []any{},
	}
}

// ownerID makes a stable owner ID for a guild (the guild ID plus one).
func ownerID(guildID string) string {
	v, _ := parseSnowflake(guildID)
	return fmt.Sprint(v + 1)
}

// shardGuildIDsLocked returns the sorted IDs of the guilds of a shard. The
// caller holds s.mu.
func (s *Server) shardGuildIDsLocked(shard int) []string {
	var ids []string
	for id, g := range s.guilds {
		if g.shard == shard {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, snowflake.Compare)
	return ids
}

// guildChange validates guildID, applies change under s.mu (which returns
// the event to send, or an error and leaves the state alone) and sends the
// event to the connected session of the guild's shard.
//
// The state changes before the write: if the write fails the connection is
// closed and a resuming session gets the event again, as on Discord.
func (s *Server) guildChange(ctx context.Context, what, guildID string,
	change func(g *guildState, exists bool, shard int) (typ string, d any, err error)) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("discordtest: %s %s: %w", what, guildID, err)
	}
	v, err := parseSnowflake(guildID)
	if err != nil {
		return fmt.Errorf("discordtest: %s: %w", what, err)
	}
	shard := snowflake.Shard(v, s.cfg.shardCount)
	s.mu.Lock()
	sess, err := s.connectedLocked(shard)
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("discordtest: %s %s: %w", what, guildID, err)
	}
	g, exists := s.guilds[guildID]
	typ, d, err := change(g, exists, shard)
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("discordtest: %s %s: %w", what, guildID, err)
	}
	s.notifyLocked()
	s.mu.Unlock()
	s.log.Debug("guild event", "event", typ, "what", what, "guild", guildID, "shard", shard)
	if err := sess.dispatch(ctx, typ, d); err != nil {
		return fmt.Errorf("discordtest: %s %s: %w", what, guildID, err)
	}
	return nil
}

// Join adds the bot to a new guild: GUILD_CREATE (available) to the
// guild's shard. It fails with ErrGuildExists if the bot is already in it,
// ErrShardNotConnected if the shard has no connected session,
// ErrInvalidSnowflake for a bad ID, ErrClosed after Close, or the context's
// error.
func (s *Server) Join(ctx context.Context, guildID string) error {
	return s.guildChange(ctx, "join", guildID, func(_ *guildState, exists bool, shard int) (string, any, error) {
		if exists {
			return "", nil, ErrGuildExists
		}
		g := &guildState{id: guildID, shard: shard, joinedAt: time.Now().UTC()}
		s.guilds[guildID] = g
		return "GUILD_CREATE", s.guildPayloadLocked(g), nil
	})
}

// Remove takes the bot out of a guild (it left or was kicked): GUILD_DELETE
// without "unavailable". It fails with ErrUnknownGuild if the bot is not in
// it, and like Join otherwise. A guild in an outage can be removed.
func (s *Server) Remove(ctx context.Context, guildID string) error {
	return s.guildChange(ctx, "remove", guildID, func(_ *guildState, exists bool, _ int) (string, any, error) {
		if !exists {
			return "", nil, ErrUnknownGuild
		}
		delete(s.guilds, guildID)
		return "GUILD_DELETE", map[string]any{"id": guildID}, nil
	})
}

// Outage makes a guild unavailable: GUILD_DELETE with "unavailable": true.
// The bot stays in the guild. It fails with ErrUnknownGuild,
// ErrGuildUnavailable if it is already in an outage, and like Join
// otherwise.
func (s *Server) Outage(ctx context.Context, guildID string) error {
	return s.guildChange(ctx, "outage", guildID, func(g *guildState, exists bool, _ int) (string, any, error) {
		switch {
		case !exists:
			return "", nil, ErrUnknownGuild
		case g.unavailable:
			return "", nil, ErrGuildUnavailable
		}
		g.unavailable = true
		return "GUILD_DELETE", map[string]any{"id": guildID, "unavailable": true}, nil
	})
}

// Restore ends a guild's outage: GUILD_CREATE (available). It fails with
// ErrUnknownGuild, ErrGuildAvailable if the guild is not in an outage, and
// like Join otherwise.
func (s *Server) Restore(ctx context.Context, guildID string) error {
	return s.guildChange(ctx, "restore", guildID, func(g *guildState, exists bool, _ int) (string, any, error) {
		switch {
		case !exists:
			return "", nil, ErrUnknownGuild
		case !g.unavailable:
			return "", nil, ErrGuildAvailable
		}
		g.unavailable = false
		return "GUILD_CREATE", s.guildPayloadLocked(g), nil
	})
}

// guildList returns the guilds the bot is in (available or not), ordered
// by ID.
func (s *Server) guildList() []guildInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]guildInfo, 0, len(s.guilds))
	for _, g := range s.guilds {
		out = append(out, guildInfo{ID: g.id, ShardID: g.shard, Unavailable: g.unavailable})
	}
	slices.SortFunc(out, func(a, b guildInfo) int { return snowflake.Compare(a.ID, b.ID) })
	return out
}

// GuildIDs returns the IDs of the guilds the bot is in (available or not),
// ordered by ID.
func (s *Server) GuildIDs() []string {
	guilds := s.guildList()
	ids := make([]string, len(guilds))
	for i, g := range guilds {
		ids[i] = g.ID
	}
	return ids
}
