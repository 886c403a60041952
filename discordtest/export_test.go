package discordtest

import (
	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// What the package's own tests (package discordtest_test) read that a user
// does not need.

const DefaultToken = defaultToken

func (s *Server) GatewayURL() string { return s.gatewayURL() }

func (s *Server) Heartbeats() int { return s.heartbeatCount() }

func (s *Server) InteractionReplies() []InteractionReply { return s.interactionReplies() }

func (s *Server) GuildCommands(guildID string) []*discordgo.ApplicationCommand {
	return s.guildCommands(guildID)
}

// Guild is a guild as the Server sees it.
type Guild = guildInfo

func (s *Server) Guilds() []Guild { return s.guildList() }

func (s *Server) Dialer() *websocket.Dialer { return s.dialer() }
