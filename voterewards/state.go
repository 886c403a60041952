package voterewards

import (
	"context"
	"errors"
)

// State is all of a bot's state in one storage: the votes with their ledger
// ([Store]), the last published slash commands' fingerprint and the reminder
// opt-ins ([ReminderStore]). boltstate, redisstate and pgstore each make one;
// [NewMemoryStore] is one in memory, for tests.
type State interface {
	Store
	ReminderStore
	// LoadHash returns the saved command fingerprint, or "" when none was saved.
	LoadHash(ctx context.Context) (string, error)
	// SaveHash replaces the saved command fingerprint: a leader write.
	SaveHash(ctx context.Context, hash string) error
	// Ping returns nil when the state answers now, for readiness.
	Ping(ctx context.Context) error
	// UseFence gives the state the leader's fence before its first use: nil
	// for one process, else a fleet's, after which every leader write (Ingest
	// with a checkpoint, Delivered, Expired, Prune, SaveHash, Reminded) fails
	// unless its token is the newest the state has seen. Memory and a
	// directory refuse a fence ([ErrNotShared]); Redis, nil ([ErrNeedsFence]).
	UseFence(f Fence) error
}

// Fence returns the fencing token of the leader term this process holds,
// and 0 while it holds none (fleet's Lease.State().Token).
type Fence func() int64

// ReminderStore keeps, per user, whether they want a vote reminder and which
// vote they were last reminded of. Implementations are safe for concurrent
// use, and each method is one atomic change, durable when it returns nil.
type ReminderStore interface {
	// SetReminder records the user's choice. Any process may call it.
	// Turning them on for a user who has them on keeps the last reminded vote.
	SetReminder(ctx context.Context, userID string, on bool) error
	// Reminder returns whether the user wants reminders and the key
	// ([Vote.Key]) of the last vote they were reminded of ("" if none).
	Reminder(ctx context.Context, userID string) (on bool, last string, err error)
	// Reminded records that the user was reminded of vote key, if they still
	// want reminders (else it changes nothing): a leader write.
	Reminded(ctx context.Context, userID, key string) error
}

var (
	// ErrNotShared is [State.UseFence]'s answer for a fence given to memory or a directory.
	ErrNotShared = errors.New("voterewards: this state is one process's; a fleet shares Redis or PostgreSQL")
	// ErrNeedsFence is [State.UseFence]'s answer for no fence given to a fleet's state (Redis).
	ErrNeedsFence = errors.New("voterewards: this state is a fleet's; its leader writes need the fleet's fence")
)
