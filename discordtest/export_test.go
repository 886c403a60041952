package discordtest

import (
	"fmt"
	"slices"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/dblkit/go-topgg/internal/discord"
)

// What the package's own tests (package discordtest_test) read that a user
// does not need.

const DefaultToken = defaultToken

// The sentinels the Server's errors wrap.
var (
	ErrClosed            = errClosed
	ErrShardNotConnected = errShardNotConnected
	ErrUnknownGuild      = errUnknownGuild
	ErrGuildExists       = errGuildExists
	ErrGuildUnavailable  = errGuildUnavailable
	ErrGuildAvailable    = errGuildAvailable
	ErrUnknownCommand    = errUnknownCommand
	ErrInvalidSnowflake  = errInvalidSnowflake
)

func (s *Server) GatewayURL() string { return s.gatewayURL() }

// Heartbeats returns how many heartbeats (op 1) the gateway received.
func (s *Server) Heartbeats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heartbeats
}

// InteractionReplies returns how many interactions the bot answered.
func (s *Server) InteractionReplies() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, it := range s.interactions {
		if it.reply != nil {
			n++
		}
	}
	return n
}

// GuildCommands returns the application commands registered for one guild.
func (s *Server) GuildCommands(guildID string) []*discordgo.ApplicationCommand {
	return s.scopeCommands(guildID)
}

// Guild is a guild as the Server sees it.
type Guild struct {
	ID          string
	ShardID     int
	Unavailable bool
}

func (s *Server) Guilds() []Guild {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Guild
	for _, g := range s.guilds {
		out = append(out, Guild{ID: g.id, ShardID: g.shard, Unavailable: g.unavailable})
	}
	slices.SortFunc(out, func(a, b Guild) int { return discord.CompareIDs(a.ID, b.ID) })
	return out
}

func (s *Server) Dialer() *websocket.Dialer { return s.dialer() }

// ShardForGuild returns the shard, out of shardCount, that receives the
// events of guild guildID.
func ShardForGuild(guildID string, shardCount int) (int, error) {
	if shardCount < 1 {
		return 0, fmt.Errorf("discordtest: shard count %d: must be at least 1", shardCount)
	}
	v, err := parseSnowflake(guildID)
	if err != nil {
		return 0, fmt.Errorf("discordtest: guild: %w", err)
	}
	return discord.ShardOf(v, shardCount), nil
}
