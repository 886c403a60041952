package discordtest

import "errors"

// Why a call of the Server failed, wrapped with the guild, shard or command
// concerned; the messages say which.
var (
	errClosed            = errors.New("server closed")
	errShardNotConnected = errors.New("shard not connected")
	errUnknownGuild      = errors.New("bot is not in the guild")
	errGuildExists       = errors.New("bot is already in the guild")
	errGuildUnavailable  = errors.New("guild is unavailable")
	errGuildAvailable    = errors.New("guild is available")
	errUnknownCommand    = errors.New("unknown application command")
	errInvalidSnowflake  = errors.New("invalid snowflake")
)
