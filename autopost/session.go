package autopost

import (
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/topgg"
)

// checkSession refuses a session that cannot be counted: nil, or one that
// identifies without the GUILDS intent.
func checkSession(i int, s *discordgo.Session) error {
	if s == nil {
		return fmt.Errorf("autopost: sessions[%d]: %w (*discordgo.Session)", i, topgg.ErrNilArgument)
	}
	if s.Identify.Intents&discordgo.IntentsGuilds == 0 {
		return fmt.Errorf("%w: sessions[%d] (shard %d)", errNoGuildsIntent, i, s.ShardID)
	}
	return nil
}
