package fleet

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/internal/fence"
	"github.com/dblkit/go-topgg/topgg"
)

var (
	// errRunning: Run was called while a Run of the same value is still
	// going on.
	errRunning = fmt.Errorf("fleet: %w", topgg.ErrRunning)
	// errNilClient: a nil Redis client (or a typed nil inside the interface)
	// was given.
	errNilClient = fmt.Errorf("fleet: %w (Redis client)", topgg.ErrNilArgument)
	// errNilFunc: Lease.Run was given a nil function.
	errNilFunc = fmt.Errorf("fleet: %w (function)", topgg.ErrNilArgument)
	// errNotMade: a method was called on a zero or nil value that must come
	// from its constructor (New, NewLease).
	errNotMade = fmt.Errorf("fleet: value %w", topgg.ErrNotConfigured)
	// ErrBadConfig means a bot name, Redis URL, duration, shard count or shard
	// id is refused. A refused URL's text shows it with its password replaced,
	// or not at all.
	ErrBadConfig = fence.ErrBadConfig
	// ErrLeaseLost is the cause (context.Cause) of a leader context that was
	// cancelled because the lease was taken by another process or could not
	// be renewed before the safety margin.
	ErrLeaseLost = errors.New("fleet: lease lost")
	// ErrFenced means Redis refused a fenced write because a newer leader
	// token exists (or the counter is gone): the writer is no longer leader.
	ErrFenced = fence.ErrFenced
	// ErrNoFence means a fenced write was attempted with a zero Fence.
	ErrNoFence = fence.ErrNoFence
)
