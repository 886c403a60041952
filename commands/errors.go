package commands

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
)

// Errors of the package, for errors.Is; the errors returned wrap them with
// the detail.
var (
	// errNotMade: a method was called on a nil or zero Syncer (make one with
	// New), or on a nil or zero Job (make one with NewJob).
	errNotMade = fmt.Errorf("commands: Syncer or Job %w (commands.New, commands.NewJob)", topgg.ErrNotConfigured)
	// errNilClient: New was given a nil *topgg.Client.
	errNilClient = fmt.Errorf("commands: New: %w (*topgg.Client)", topgg.ErrNilArgument)
	// errNilStore: Config.Store holds a nil pointer (a typed nil), which
	// would panic at its first use.
	errNilStore = fmt.Errorf("commands: Config.Store: %w", topgg.ErrNilArgument)
	// errNilSession: a nil *discordgo.Session was given.
	errNilSession = fmt.Errorf("commands: %w (*discordgo.Session)", topgg.ErrNilArgument)
	// errNoPath: a fileHashStore has no path: make it with
	// NewFileHashStore.
	errNoPath = fmt.Errorf("commands: fileHashStore (no path) %w (commands.NewFileHashStore)", topgg.ErrNotConfigured)
	// errRunning: Run was called while the Job was already running.
	errRunning = fmt.Errorf("commands: Job %w", topgg.ErrRunning)
	// ErrRefused means the definitions are the ones the service refused the
	// last time, for a reason no retry mends; they are not sent again. The
	// error also wraps the service's refusal.
	ErrRefused = errors.New("commands: the service refused these definitions before; not sent again")
)
