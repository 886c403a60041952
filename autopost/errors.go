package autopost

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
)

// Errors of the package, for errors.Is. The errors returned wrap them with
// the detail (which session, which call).
var (
	// errRunning: Run was called while the Poster was already running.
	errRunning = fmt.Errorf("autopost: Poster %w", topgg.ErrRunning)
	// ErrNoSessions means the Poster's Counter has no session attached when
	// Run starts, so there is nothing to count.
	ErrNoSessions = errors.New("autopost: no session attached")
	// errNotMade: a method was called on a nil or zero Poster; make one with New.
	errNotMade = fmt.Errorf("autopost: Poster %w (autopost.New)", topgg.ErrNotConfigured)
	// errNilClient: New was given a nil *topgg.Client.
	errNilClient = fmt.Errorf("autopost: New: %w (*topgg.Client)", topgg.ErrNilArgument)
	// ErrSessionOpen means a session given to Attach is open, being opened,
	// or was opened before: its READY, which lists the shard's guilds, has
	// been missed (a session opened again resumes, with no new READY), so
	// it would never count. Attach sessions before their first Open.
	ErrSessionOpen = errors.New("autopost: session already opened; attach it before Open, or its READY is missed")
	// ErrAttachedTwice means a session, or another session of the same
	// shard, is already attached to the Counter; counting it twice would
	// double its guilds.
	ErrAttachedTwice = errors.New("autopost: session or shard already attached")
	// ErrNoGuildsIntent means a session identifies without the GUILDS
	// intent, so Discord sends it no GUILD_CREATE or GUILD_DELETE and its
	// count would never change.
	ErrNoGuildsIntent = errors.New("autopost: session lacks the GUILDS intent (discordgo.IntentsGuilds)")
	// ErrNoCounter means Attach was called on a Poster whose Source is not
	// its own Counter: attach the sessions to the Source's counter instead.
	ErrNoCounter = errors.New("autopost: the Poster posts from another Source; attach sessions to that Source's Counter")
)
