package voterewards

import (
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
)

// Sentinel errors, for errors.Is; the errors that carry them say the field,
// the file or the vote.
var (
	// ErrBadConfig is returned by [New] for a Config it cannot run: OnReward
	// or Store missing, a negative duration or count, an Interval below the
	// floor. The error names the field.
	ErrBadConfig = errors.New("voterewards: invalid Config")
	// ErrInvalidVote is returned by [Poller.Ingest] for a vote that cannot be
	// one: no user id of either kind, no Origin, or ids longer than the store
	// keeps. A webhook receiver answers such a delivery 400.
	ErrInvalidVote = errors.New("voterewards: invalid vote")
	// ErrNotRunning is returned by [Poller.Redeliver] when [Poller.Run] is
	// not running: the next Run redelivers what is pending anyway.
	ErrNotRunning = errors.New("voterewards: Run is not running")

	errRunning    = fmt.Errorf("voterewards: Poller %w", topgg.ErrRunning)
	errNotMade    = fmt.Errorf("voterewards: Poller %w (voterewards.New)", topgg.ErrNotConfigured)
	errNilHistory = fmt.Errorf("voterewards: New: %w (History)", topgg.ErrNilArgument)
)
