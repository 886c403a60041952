package autopost

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
)

// Errors of the package, for errors.Is; the errors returned wrap them.
var (
	// errRunning: a second Run of the Poster.
	errRunning = fmt.Errorf("autopost: Poster %w", topgg.ErrRunning)
	// ErrNoSessions means the Poster's Counter has no session attached when
	// Run starts.
	ErrNoSessions = errors.New("autopost: no session attached")
	// errNilClient: New was given a nil *topgg.Client.
	errNilClient = fmt.Errorf("autopost: New: %w (*topgg.Client)", topgg.ErrNilArgument)
	// ErrSessionOpen means a session given to Attach was opened before, so
	// its READY, which lists the shard's guilds, was missed.
	ErrSessionOpen = errors.New("autopost: session already opened; attach it before Open, or its READY is missed")
	// errAttachedTwice: a session, or another of the same shard, is already
	// attached to the Counter.
	errAttachedTwice = errors.New("autopost: session or shard already attached")
	// errNoGuildsIntent: a session identifies without the GUILDS intent, so
	// its count would never change.
	errNoGuildsIntent = errors.New("autopost: session lacks the GUILDS intent (discordgo.IntentsGuilds)")
	// errNoCounter: Attach on a Poster whose Source is not its own Counter.
	errNoCounter = errors.New("autopost: the Poster posts from another Source; attach sessions to that Source's Counter")
)
