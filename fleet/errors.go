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
	// ErrBadConfig means a bot name, Redis URL, duration, shard count or shard
	// id is refused; the error never shows a password.
	ErrBadConfig = fence.ErrBadConfig
	// ErrLeaseLost is the cause (context.Cause) of a leader context cancelled
	// because the lease was taken or could not be renewed in time.
	ErrLeaseLost = errors.New("fleet: lease lost")
	// ErrFenced means Redis refused a fenced write: the writer is no longer leader.
	ErrFenced = fence.ErrFenced
	// ErrNoFence means a fenced write was attempted with a zero Fence.
	ErrNoFence = fence.ErrNoFence
)
