package voterewards

import (
	"context"
	"time"
)

// DedupWindow is the rule that makes one vote of the records several sources
// give of it: two records of the same voter (same PlatformID, else UserID)
// whose created_at differ by less than DedupWindow are one vote, the one
// stored first.
//
// Why it is sound: a user cannot vote again before their vote expires
// ([VoteLifetime], 12 hours), so two real votes of one user are at least 12
// hours apart, while the records of one vote differ only by their timestamps'
// precision (the history has 6 fractional digits and Z, webhooks 7 and
// +00:00) or, for a v0 webhook that carries no timestamp, by the delay
// between the vote and its receipt. The window leaves one hour of tolerance
// on each side: records of one vote up to an hour apart are merged, and real
// votes are never merged as long as a receipt delay stays under an hour.
const DedupWindow = VoteLifetime - time.Hour

// Checkpoint is where the poller stands in the vote history.
type Checkpoint struct {
	// Cursor reads the page after the last one read; "" when the service gave
	// none or refused it, and the poller restarts from LastSeen.
	Cursor string
	// LastSeen is the newest created_at read so far.
	LastSeen time.Time
	// Since is where the history read without a gap starts: the first run's
	// startDate, moved forward only if a restart had to skip history older than
	// the service keeps.
	Since time.Time
}

// Snapshot is everything a [Store] holds, as [Store.Load] returns it.
type Snapshot struct {
	Checkpoint Checkpoint
	// Seen is the dedup set: every vote stored and not yet pruned.
	Seen []Vote
	// Pending are the votes whose reward is not yet delivered, oldest first.
	Pending []Vote
	// Expiries are the delivered votes whose expiry is not yet handled,
	// soonest ExpiresAt first.
	Expiries []Vote
}

// Store keeps the vote pipeline's state: the checkpoint, the dedup set and the
// pending deliveries and expiries. Each method is one atomic change: after a
// crash the store holds the state before or after it, never a part, and
// concurrent calls (from this process or, for a shared store, from others)
// behave as if made one after another. Implementations must be safe for
// concurrent use.
//
// Votes given to a Store are sanitized (UTC, no monotonic reading, Key set,
// ExpiresAt after CreatedAt); a Store returns them with every field
// ([Vote.Origin] and [Vote.Hook] included) as given.
//
// A Store may also implement [Feed], which a store shared by several
// processes needs so that each learns of the votes the others ingest.
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
	Ingest(ctx context.Context, cp *Checkpoint, votes []Vote) (added []Vote, err error)
	// Delivered removes v from the pending deliveries and, if expire is true,
	// adds it to the pending expiries, in one atomic change. v is identified
	// by its Key.
	Delivered(ctx context.Context, v Vote, expire bool) error
	// Expired removes v from the pending expiries.
	Expired(ctx context.Context, v Vote) error
	// Prune removes from the dedup set votes created before createdBefore
	// whose ExpiresAt is not after now; it must keep every other vote. It may
	// keep some of those too (the stores here stop at the first vote, in
	// creation order, that has not expired, so that a prune costs what it
	// removes): pruning only bounds the set to the vote window. Pending
	// deliveries and expiries are not touched.
	Prune(ctx context.Context, createdBefore, now time.Time) error
}

// Feed is implemented by a [Store] shared by several processes (a fleet),
// so that each process learns of the votes the others add: [Poller.Run]
// delivers them within moments without polling the store, and
// [Poller.Mirror] keeps [Poller.Active] current in every process.
type Feed interface {
	// Follow blocks until ctx is done (then returns nil) or the feed fails
	// for good (then returns the error). Once it is listening it calls
	// resync; then it calls added with every vote that any process adds to
	// the store (this one included) from that moment on, in the order of
	// their Ingest calls. Whenever it may have missed votes (a reconnect, a
	// reader too slow for its buffer) it calls resync again, and the caller
	// reloads the store. added and resync are called from one goroutine,
	// never concurrently, and must not block for long.
	Follow(ctx context.Context, added func(Vote), resync func()) error
}
