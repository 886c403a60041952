package commands

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
)

// Errors of the package, for errors.Is; the errors returned wrap them.
var (
	// errNilClient: New was given a nil *topgg.Client.
	errNilClient = fmt.Errorf("commands: New: %w (*topgg.Client)", topgg.ErrNilArgument)
	// errNilStore: Config.Store holds a typed nil.
	errNilStore = fmt.Errorf("commands: Config.Store: %w", topgg.ErrNilArgument)
	// errRunning: a second Run of the Syncer.
	errRunning = fmt.Errorf("commands: Syncer.Run: %w", topgg.ErrRunning)
	// errNotReady: a session without READY, so no application ID.
	errNotReady = errors.New("commands: discordgo session is not ready (no READY received)")
	// errDiscordFetch marks a failure to read the commands from Discord.
	errDiscordFetch = errors.New("commands: fetching the application's commands from Discord")
	// ErrRefused means the service refused these definitions before, for good;
	// they are not sent again. The error also wraps the service's refusal.
	ErrRefused = errors.New("commands: the service refused these definitions before; not sent again")
)
