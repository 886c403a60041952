package fleet

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/internal/fence"
	"github.com/dblkit/go-topgg/topgg"
)

var (
	// errRunning: a second Run of the same value.
	errRunning = fmt.Errorf("fleet: %w", topgg.ErrRunning)
	// errNilClient: a nil Redis client, typed nil included.
	errNilClient = fmt.Errorf("fleet: %w (Redis client)", topgg.ErrNilArgument)
	// errNilFunc: Lease.Run was given a nil function.
	errNilFunc = fmt.Errorf("fleet: %w (function)", topgg.ErrNilArgument)
	// errDamaged: a key of the fleet holds what no process of it writes.
	errDamaged = errors.New("damaged shared state")
	// ErrLeaseLost is the cause (context.Cause) of a leader context cancelled
	// because the lease was taken or could not be renewed in time.
	ErrLeaseLost = errors.New("fleet: lease lost")
	// ErrFenced means Redis refused a fenced write: the writer is no longer leader.
	ErrFenced = fence.ErrFenced
	// ErrNoFence means a fenced write was attempted with a zero Fence.
	ErrNoFence = fence.ErrNoFence
)

// configError is a refused setting; its text never shows a password.
func configError(field, format string, args ...any) error {
	return &topgg.ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)}
}
