package voterewards

import (
	"context"
	"errors"
	"time"
)

// DedupWindow makes one vote of the records several sources give of it: two
// records of the same voter whose created_at differ by less than DedupWindow
// are one vote, the one stored first. Two real votes of one user are at least
// [VoteLifetime] apart.
const DedupWindow = VoteLifetime - time.Hour

// Checkpoint is where the poller stands in the vote history.
type Checkpoint struct {
	// Cursor reads the page after the last one read; "" restarts from LastSeen.
	Cursor string
	// LastSeen is the newest created_at read so far.
	LastSeen time.Time
	// Since is where the gapless read of the history starts (the first run's
	// startDate, moved past history the service no longer keeps).
	Since time.Time
}

// Snapshot is everything a [Store] holds, as [Store.Load] returns it.
type Snapshot struct {
	Checkpoint Checkpoint
	// Seen is the dedup set: every vote stored and not yet pruned. Lists are
	// in any order.
	Seen []Vote
	// Pending are the votes whose reward is not yet delivered.
	Pending []Vote
	// Expiries are the delivered votes whose expiry is not yet handled.
	Expiries []Vote
}

// Store keeps the vote pipeline's state: the checkpoint, the dedup set and the
// pending deliveries and expiries. Each method is one atomic change, and
// concurrent calls, from this process or others, behave as if made one after
// another. Votes given to a Store are sanitized; it returns them as given.
type Store interface {
	// Load returns the whole state; a new store returns a zero Snapshot.
	Load(ctx context.Context) (*Snapshot, error)
	// Ingest, in one atomic change, saves *cp (if not nil), adds to the dedup
	// set and to the pending deliveries each vote that is not a duplicate (a
	// vote of the same voter, PlatformID else UserID, in the set or earlier in
	// votes, whose CreatedAt differs by less than [DedupWindow]), counts it in
	// its voter's ledger with [Stats.Add] and grace, and returns the added
	// votes in order with their Stats set. They are durable when it returns nil.
	Ingest(ctx context.Context, cp *Checkpoint, votes []Vote, grace time.Duration) (added []Vote, err error)
	// Delivered removes v (by its Key) from the pending deliveries and, if
	// expire, adds it to the pending expiries, in one atomic change.
	Delivered(ctx context.Context, v Vote, expire bool) error
	// Expired removes v from the pending expiries.
	Expired(ctx context.Context, v Vote) error
	// Prune removes from the dedup set votes created before createdBefore
	// whose ExpiresAt is not after now; it may keep some of them, and never
	// touches pending deliveries, expiries or the ledger.
	Prune(ctx context.Context, createdBefore, now time.Time) error

	// Stats returns the ledger of voter user (a PlatformID, else a UserID); a
	// voter never seen gets a zero Stats with UserID set, and user "" is an
	// error wrapping [topgg.ErrNilArgument].
	Stats(ctx context.Context, user string) (Stats, error)
	// Leaderboard returns the top n voters ([CompareStandings] order) of the
	// UTC month that holds month, or of all time if month is zero. n must be
	// 1..[MaxLeaderboard] ([ErrBadLeaderboard]).
	Leaderboard(ctx context.Context, month time.Time, n int) ([]Standing, error)
}

// Feed is implemented by a [Store] shared by several processes, so that
// [Poller.Run] delivers the votes the others add and [Poller.Mirror] keeps
// [Poller.Active] current in every process.
type Feed interface {
	// Follow calls resync once it is listening, then added with every vote
	// any process adds (this one included), in Ingest order, and resync again
	// whenever it may have missed some. Both are called from one goroutine
	// and must not block for long. It returns nil when ctx is done, or the
	// error that ends the feed for good.
	Follow(ctx context.Context, added func(Vote), resync func()) error
}

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
