package plugin

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
)

// Errors of the plugin's lifecycle and wiring, for [errors.Is]. Each is wrapped
// with the detail of the call that failed.
var (
	// errRunning: [Plugin.Run] was called while a Run of the same plugin was
	// still going on.
	errRunning = fmt.Errorf("plugin: Plugin %w", topgg.ErrRunning)
	// ErrAttachAfterRun means [Plugin.Attach] was called after the first
	// [Plugin.Run]: the jobs have already looked for their sessions, so a
	// session attached now would post nothing and publish no commands.
	ErrAttachAfterRun = errors.New("plugin: Attach after Run")
	// errNilArg: a nil (or typed-nil) value was passed where one is required:
	// a nil *topgg.Client, a nil session, a nil handler or logger given to an
	// Option. The errors returned say which.
	errNilArg = fmt.Errorf("plugin: %w", topgg.ErrNilArgument)
	// ErrJobFailed means a job stopped on an error that no restart mends (the
	// service refused the token, say); [Plugin.Run] then stops the other jobs
	// and returns it, wrapping the job's own error.
	ErrJobFailed = errors.New("plugin: job failed permanently")
	// errNotMade: a method was called on a nil or zero Plugin, one not made by
	// [New]: it has no jobs to run and nowhere to send READY.
	errNotMade = fmt.Errorf("plugin: Plugin %w (plugin.New)", topgg.ErrNotConfigured)
)
