package discordtest

import "errors"

// Sentinel errors, always returned wrapped ("discordtest: join <id>: ...")
// with the guild, shard or command concerned. Test them with errors.Is.
var (
	// ErrClosed means the Server was closed.
	ErrClosed = errors.New("server closed")
	// ErrShardNotConnected means no session of the shard that owns the guild
	// is connected (identified or resumed, and not dropped), so the event
	// would have nowhere to go.
	ErrShardNotConnected = errors.New("shard not connected")
	// ErrUnknownGuild means the bot is not in the guild.
	ErrUnknownGuild = errors.New("bot is not in the guild")
	// ErrGuildExists means the bot is already in the guild.
	ErrGuildExists = errors.New("bot is already in the guild")
	// ErrGuildUnavailable means the guild is in an outage.
	ErrGuildUnavailable = errors.New("guild is unavailable")
	// ErrGuildAvailable means the guild is not in an outage.
	ErrGuildAvailable = errors.New("guild is available")
	// ErrUnknownCommand means no application command of that name is
	// registered (globally or for the guild).
	ErrUnknownCommand = errors.New("unknown application command")
	// ErrInvalidSnowflake means an ID is not a Discord snowflake (a decimal
	// unsigned 64-bit integer).
	ErrInvalidSnowflake = errors.New("invalid snowflake")
)
