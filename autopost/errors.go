package autopost

import "errors"

// Errors of the package, for errors.Is; the errors returned wrap them.
var (
	// ErrNoSessions means the Poster's Counter has no session attached when
	// Run starts.
	ErrNoSessions = errors.New("autopost: no session attached")
	// ErrSessionOpen means a session given to Attach was opened before, so
	// its READY, which lists the shard's guilds, was missed.
	ErrSessionOpen    = errors.New("autopost: session already opened; attach it before Open, or its READY is missed")
	errAttachedTwice  = errors.New("autopost: session or shard already attached")
	errNoGuildsIntent = errors.New("autopost: session lacks the GUILDS intent (discordgo.IntentsGuilds)")
	errNoCounter      = errors.New("autopost: the Poster posts from another Source; attach sessions to that Source's Counter")
)
