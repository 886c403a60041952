package discordtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/internal/discord"
)

// guildState is what the fake knows of a guild the bot is in.
type guildState struct {
	id          string
	shard       int
	unavailable bool
	joinedAt    time.Time
}

// memberCount is the member count every fake guild reports: the bot and
// one owner.
const memberCount = 2

// botUser is the bot's user object.
func (s *Server) botUser() map[string]any {
	return map[string]any{"id": s.cfg.botID, "username": s.cfg.botName, "discriminator": "0", "bot": true, "verified": true}
}

// guildPayloadLocked is the guild object of GUILD_CREATE (fields left out are zero).
func (s *Server) guildPayloadLocked(g *guildState) map[string]any {
	return map[string]any{
		"id": g.id, "name": "Guild " + g.id, "owner_id": ownerID(g.id), "preferred_locale": "en-US",
		"joined_at": g.joinedAt.Format(time.RFC3339Nano), "member_count": memberCount,
		// The @everyone role has the guild's ID.
		"roles": []map[string]any{{"id": g.id, "name": "@everyone", "permissions": "0", "position": 0}},
	}
}

// ownerID makes a stable owner ID for a guild (the guild ID plus one).
func ownerID(guildID string) string {
	v, _ := parseSnowflake(guildID)
	return fmt.Sprint(v + 1)
}

// shardGuildIDsLocked returns the sorted IDs of a shard's guilds.
func (s *Server) shardGuildIDsLocked(shard int) []string {
	ids := slices.SortedFunc(maps.Keys(s.guilds), discord.CompareIDs)
	return slices.DeleteFunc(ids, func(id string) bool { return s.guilds[id].shard != shard })
}

// guildChange applies change under s.mu (it returns the event to send, or
// an error and leaves the state alone) and sends the event to the guild's
// shard. The state changes first: if the write fails, a resuming session
// gets the event again, as on Discord.
func (s *Server) guildChange(ctx context.Context, what, guildID string,
	change func(g *guildState, exists bool, shard int) (typ string, d any, err error)) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("discordtest: %s %s: %w", what, guildID, err)
	}
	v, err := parseSnowflake(guildID)
	if err != nil {
		return fmt.Errorf("discordtest: %s: %w", what, err)
	}
	shard := discord.ShardOf(v, s.cfg.shardCount)
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
	if err := sess.dispatch(ctx, typ, d); err != nil {
		return fmt.Errorf("discordtest: %s %s: %w", what, guildID, err)
	}
	return nil
}

// Join adds the bot to a new guild: GUILD_CREATE to the guild's shard. It
// fails if the bot is in it already, the shard is not connected, the ID is
// invalid, the Server is closed or the context is done.
func (s *Server) Join(ctx context.Context, guildID string) error {
	return s.guildChange(ctx, "join", guildID, func(_ *guildState, exists bool, shard int) (string, any, error) {
		if exists {
			return "", nil, errGuildExists
		}
		g := &guildState{id: guildID, shard: shard, joinedAt: time.Now().UTC()}
		s.guilds[guildID] = g
		return "GUILD_CREATE", s.guildPayloadLocked(g), nil
	})
}

// Remove takes the bot out of a guild, in an outage or not: GUILD_DELETE
// without "unavailable". It fails if the bot is not in it, and like Join.
func (s *Server) Remove(ctx context.Context, guildID string) error {
	return s.guildChange(ctx, "remove", guildID, func(_ *guildState, exists bool, _ int) (string, any, error) {
		if !exists {
			return "", nil, errUnknownGuild
		}
		delete(s.guilds, guildID)
		return "GUILD_DELETE", map[string]any{"id": guildID}, nil
	})
}

// Outage makes a guild unavailable, the bot staying in it: GUILD_DELETE
// with "unavailable": true. It fails if the bot is not
// in it or it is unavailable already, and like Join.
func (s *Server) Outage(ctx context.Context, guildID string) error {
	return s.guildChange(ctx, "outage", guildID, func(g *guildState, exists bool, _ int) (string, any, error) {
		switch {
		case !exists:
			return "", nil, errUnknownGuild
		case g.unavailable:
			return "", nil, errGuildUnavailable
		}
		g.unavailable = true
		return "GUILD_DELETE", map[string]any{"id": guildID, "unavailable": true}, nil
	})
}

// Restore ends a guild's outage: GUILD_CREATE. It fails if the bot is not
// in it or it is available, and like Join.
func (s *Server) Restore(ctx context.Context, guildID string) error {
	return s.guildChange(ctx, "restore", guildID, func(g *guildState, exists bool, _ int) (string, any, error) {
		switch {
		case !exists:
			return "", nil, errUnknownGuild
		case !g.unavailable:
			return "", nil, errGuildAvailable
		}
		g.unavailable = false
		return "GUILD_CREATE", s.guildPayloadLocked(g), nil
	})
}

// GuildIDs returns the IDs of the guilds the bot is in (available or not),
// ordered by ID.
func (s *Server) GuildIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.SortedFunc(maps.Keys(s.guilds), discord.CompareIDs)
}
