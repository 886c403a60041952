package voterewards

import (
	"context"
	"time"
)

// DedupWindow makes one vote of the records several sources give of it: two
// records of the same voter (PlatformID, else UserID) whose created_at differ
// by less than DedupWindow are one vote, the one stored first. It is sound
// because two real votes of one user are at least [VoteLifetime] apart, while
// the records of one vote differ by their timestamps' precision or, for a v0
// webhook (no timestamp), by the receipt delay: an hour of tolerance each way.
const DedupWindow = VoteLifetime - time.Hour

// Checkpoint is where the poller stands in the vote history.
type Checkpoint struct {
	// Cursor reads the page after the last one read; "" restarts from LastSeen.
	Cursor string
	// LastSeen is the newest created_at read so far.
	LastSeen time.Time
	// Since is where the history read without a gap starts (the first run's
	// startDate, moved forward only past history the service no longer keeps).
	Since time.Time
}

// Snapshot is everything a [Store] holds, as [Store.Load] returns it.
type Snapshot struct {
	Checkpoint Checkpoint
	// Seen is the dedup set: every vote stored and not yet pruned. It and
	// the lists below are in any order: the Poller orders the work.
	Seen []Vote
	// Pending are the votes whose reward is not yet delivered.
	Pending []Vote
	// Expiries are the delivered votes whose expiry is not yet handled.
	Expiries []Vote
}

// Store keeps the vote pipeline's state: the checkpoint, the dedup set and the
// pending deliveries and expiries. Each method is one atomic change (after a
// crash the store holds the state before or after it), and concurrent calls,
// from this process or others, behave as if made one after another.
//
// Votes given to a Store are sanitized (UTC, no monotonic reading, ExpiresAt
// after CreatedAt); a Store returns them with every field as given. A store
// shared by several processes also implements [Feed].
type Store interface {
	// Load returns the whole state; a new store returns a zero Snapshot.
	Load(ctx context.Context) (*Snapshot, error)
	// Ingest, in one atomic change, saves *cp (if cp is not nil) and adds to
	// the dedup set and to the pending deliveries each vote that is not a
	// duplicate of a vote in the set (or earlier in votes), and returns the
	// added votes in order. A vote is a duplicate when the set holds a vote
	// of the same voter (PlatformID, else UserID) whose CreatedAt differs
	// from its own by less than [DedupWindow]. It is durable when Ingest
	// returns nil.
	//
	// In the same atomic change it counts each added vote in its voter's
	// ledger with [Stats.Add] and the given streak grace, and sets the
	// added vote's Stats to the result; the Stats of a vote are kept with it
	// (Load returns them on pending votes and expiries).
	Ingest(ctx context.Context, cp *Checkpoint, votes []Vote, grace time.Duration) (added []Vote, err error)
	// Delivered removes v from the pending deliveries and, if expire is true,
	// adds it to the pending expiries, in one atomic change. v is identified
	// by its Key.
	Delivered(ctx context.Context, v Vote, expire bool) error
	// Expired removes v from the pending expiries.
	Expired(ctx context.Context, v Vote) error
	// Prune removes from the dedup set votes created before createdBefore
	// whose ExpiresAt is not after now, and keeps every other vote. It may
	// keep some of those too (the stores here stop at the first vote, in
	// creation order, not expired): it only bounds the set to the vote
	// window. Pending deliveries and expiries are not touched.
	Prune(ctx context.Context, createdBefore, now time.Time) error

	// Stats returns the ledger of voter user (a PlatformID, else a UserID)
	// in one read; a voter never seen gets a zero Stats with User set, and
	// user "" is an error wrapping [topgg.ErrNilArgument].
	Stats(ctx context.Context, user string) (Stats, error)
	// Leaderboard returns the top n voters ([CompareStandings] order) of the
	// UTC month that holds month, or of all time if month is zero. n must be
	// 1..[MaxLeaderboard] ([ErrBadLeaderboard]). Prune does not touch the
	// ledger: totals and boards cover every vote ever admitted.
	Leaderboard(ctx context.Context, month time.Time, n int) ([]Standing, error)
}

// Feed is implemented by a [Store] shared by several processes (a fleet), so
// that [Poller.Run] delivers the votes the others add within moments, and
// [Poller.Mirror] keeps [Poller.Active] current in every process.
type Feed interface {
	// Follow blocks until ctx is done (then returns nil) or the feed fails
	// for good (then returns the error). Once it is listening it calls
	// resync; then it calls added with every vote that any process adds to
	// the store (this one included) from that moment on, in the order of
	// their Ingest calls. Whenever it may have missed votes (a reconnect, a
	// reader too slow for its buffer) it calls resync again. added and
	// resync are called from one goroutine and must not block for long.
	Follow(ctx context.Context, added func(Vote), resync func()) error
}
