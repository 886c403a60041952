package discordtest

import "errors"

// Sentinel errors, returned wrapped with the guild, shard or command
// concerned.
var (
	// ErrClosed means the Server was closed.
	ErrClosed = errors.New("server closed")
	// ErrShardNotConnected means no session of the guild's shard is
	// connected, so the event would have nowhere to go.
	ErrShardNotConnected = errors.New("shard not connected")
	// ErrUnknownGuild means the bot is not in the guild.
	ErrUnknownGuild = errors.New("bot is not in the guild")
	// ErrGuildExists means the bot is already in the guild.
	ErrGuildExists = errors.New("bot is already in the guild")
	// ErrGuildUnavailable means the guild is in an outage.
	ErrGuildUnavailable = errors.New("guild is unavailable")
	// ErrGuildAvailable means the guild is not in an outage.
	ErrGuildAvailable = errors.New("guild is available")
	// ErrUnknownCommand means no application command has that name.
	ErrUnknownCommand = errors.New("unknown application command")
	// ErrInvalidSnowflake means an ID is not a canonical decimal uint64.
	ErrInvalidSnowflake = errors.New("invalid snowflake")
)
