package autopost

import (
	"fmt"

	"github.com/bwmarrin/discordgo"
)

// checkSession refuses a session that cannot be counted: nil, or one that
// identifies without the GUILDS intent.
func checkSession(i int, s *discordgo.Session) error {
	if s == nil {
		return fmt.Errorf("%w: sessions[%d]", ErrNilSession, i)
	}
	if s.Identify.Intents&discordgo.IntentsGuilds == 0 {
		return fmt.Errorf("%w: sessions[%d] (shard %d)", ErrNoGuildsIntent, i, s.ShardID)
	}
	return nil
}
