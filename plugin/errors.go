package plugin

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
)

// Errors of the plugin's lifecycle and wiring, for [errors.Is], wrapped with
// the detail of the call that failed.
var (
	// errRunning: [Plugin.Run] was called beside another Run.
	errRunning = fmt.Errorf("plugin: Plugin %w", topgg.ErrRunning)
	// ErrAttachAfterRun: [Plugin.Attach] after the first [Plugin.Run], whose
	// jobs would never see the session.
	ErrAttachAfterRun = errors.New("plugin: Attach after Run")
	// errNilArg: a nil (or typed-nil) value was passed where one is required.
	errNilArg = fmt.Errorf("plugin: %w", topgg.ErrNilArgument)
	// ErrJobFailed means a job stopped on an error no restart mends;
	// [Plugin.Run] then stops the others and returns it, wrapping the cause.
	ErrJobFailed = errors.New("plugin: job failed permanently")
)
