package voterewards

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
)

// Sentinel errors, for errors.Is. Errors that carry them are wrapped with
// details (the field, the file, the vote).
var (
	// errRunning is returned by [Poller.Run] (and [Poller.Mirror]) when
	// another call of it is still running on the same Poller.
	errRunning = fmt.Errorf("voterewards: Poller %w", topgg.ErrRunning)
	// ErrNotRunning is returned by [Poller.Redeliver] when [Poller.Run] is
	// not running: the next Run redelivers what is pending anyway.
	ErrNotRunning = errors.New("voterewards: Run is not running")
	// errNotMade is returned by the methods of a Poller that was not made by
	// [New] (a zero value).
	errNotMade = fmt.Errorf("voterewards: Poller %w (voterewards.New)", topgg.ErrNotConfigured)
	// errNilHistory is returned by [New] for a nil History, or an interface
	// holding a nil pointer (a typed nil such as (*topgg.Client)(nil)).
	errNilHistory = fmt.Errorf("voterewards: New: %w (History)", topgg.ErrNilArgument)
	// ErrNoStore is returned by [New] when Config.Store is nil or a typed nil.
	ErrNoStore = errors.New("voterewards: Config.Store is required (OpenStore(dir) or NewMemoryStore())")
	// ErrNoRewardHandler is returned by [New] when Config.OnReward is nil.
	ErrNoRewardHandler = errors.New("voterewards: Config.OnReward is required")
	// ErrBadConfig is returned by [New] for an impossible value (a negative
	// duration or count); the error names the field.
	ErrBadConfig = errors.New("voterewards: invalid Config")
	// ErrInvalidVote is returned by [Poller.Ingest] for a vote that cannot be
	// one: no user id of either kind, no Origin, or ids longer than the store
	// keeps. A webhook receiver answers such a delivery 400.
	ErrInvalidVote = errors.New("voterewards: invalid vote")
)
