package fleet

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
)

var (
	// errRunning: Run was called while a Run of the same value is still
	// going on.
	errRunning = fmt.Errorf("fleet: %w", topgg.ErrRunning)
	// errNilClient: a nil Redis client (or a typed nil inside the interface)
	// was given.
	errNilClient = fmt.Errorf("fleet: %w (Redis client)", topgg.ErrNilArgument)
	// errNilFunc: Lease.Run (or Follow) was given a nil function.
	errNilFunc = fmt.Errorf("fleet: %w (function)", topgg.ErrNilArgument)
	// errNotMade: a method was called on a zero or nil value that must come
	// from its constructor (New, NewLease).
	errNotMade = fmt.Errorf("fleet: value %w", topgg.ErrNotConfigured)
	// ErrBadBot means the bot name is empty or holds a character that would
	// break the key layout ('{', '}' or a space).
	ErrBadBot = errors.New("fleet: invalid bot name")
	// ErrBadConfig means a duration, shard count or shard id is out of range.
	ErrBadConfig = errors.New("fleet: invalid configuration")
	// ErrInvalidURL means a Redis URL does not parse. The error text shows the
	// URL with its password replaced, or no URL at all.
	ErrInvalidURL = errors.New("fleet: invalid Redis URL")
	// ErrLeaseLost is the cause (context.Cause) of a leader context that was
	// cancelled because the lease was taken by another process or could not
	// be renewed before the safety margin.
	ErrLeaseLost = errors.New("fleet: lease lost")
	// ErrFenced means Redis refused a fenced write because a newer leader
	// token exists (or the counter is gone): the writer is no longer leader.
	ErrFenced = errors.New("fleet: write refused by the fence: a newer leader exists")
	// ErrNoFence means a fenced write was attempted with a zero Fence.
	ErrNoFence = errors.New("fleet: zero fence (no leader token)")
)
