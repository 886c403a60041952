package discordtest

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// defaultToken is the bot token of a Server made without WithToken.
const defaultToken = "discordtest-token"

// Option configures a Server; an invalid value makes NewServer fail.
type Option func(*config) error

type config struct {
	shardCount int
	guilds     []string
	botID      string
	botName    string
	appID      string
	token      string
	heartbeat  time.Duration
}

func defaultConfig() config {
	return config{
		shardCount: 1,
		botID:      "1100000000000000001",
		botName:    "discordtest-bot",
		token:      defaultToken,
		heartbeat:  41250 * time.Millisecond, // Discord's usual value
	}
}

// WithShardCount sets the number of shards the bot runs (default 1): the
// gateway refuses an IDENTIFY with another count, and routes each guild to
// shard (guild_id >> 22) % n.
func WithShardCount(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("discordtest: shard count %d: must be at least 1", n)
		}
		c.shardCount = n
		return nil
	}
}

// WithGuilds adds guilds the bot is in from the start (available). Options
// accumulate; duplicates are ignored.
func WithGuilds(ids ...string) Option {
	return func(c *config) error {
		for _, id := range ids {
			if _, err := parseSnowflake(id); err != nil {
				return fmt.Errorf("discordtest: guild %q: %w", id, err)
			}
		}
		c.guilds = append(c.guilds, ids...)
		return nil
	}
}

// WithBotUser sets the bot user's ID (a snowflake) and name (default
// "1100000000000000001", "discordtest-bot"; see Server.BotUserID).
func WithBotUser(id, name string) Option {
	return func(c *config) error {
		if _, err := parseSnowflake(id); err != nil {
			return fmt.Errorf("discordtest: bot user %q: %w", id, err)
		}
		if name == "" {
			return errors.New("discordtest: bot user name is empty")
		}
		c.botID, c.botName = id, name
		return nil
	}
}

// WithApplicationID sets the application ID (default: the bot user's ID,
// as for any bot created since 2020).
func WithApplicationID(id string) Option {
	return func(c *config) error {
		if _, err := parseSnowflake(id); err != nil {
			return fmt.Errorf("discordtest: application %q: %w", id, err)
		}
		c.appID = id
		return nil
	}
}

// WithToken sets the bot token the Server accepts, without the "Bot " prefix
// (default "discordtest-token"; see Server.Token).
func WithToken(token string) Option {
	return func(c *config) error {
		if token == "" || strings.ContainsAny(token, " \t\r\n") {
			// The token itself stays out of the message.
			return errors.New("discordtest: token is empty or contains white space")
		}
		c.token = token
		return nil
	}
}

// WithHeartbeatInterval sets the heartbeat interval sent in HELLO (whole
// milliseconds; default 41.25s). Keep it at 400ms or more, or -race stalls
// may make discordgo drop the connection.
func WithHeartbeatInterval(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Millisecond {
			return fmt.Errorf("discordtest: heartbeat interval %v: must be at least 1ms", d)
		}
		c.heartbeat = d.Truncate(time.Millisecond)
		return nil
	}
}
