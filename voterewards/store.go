package voterewards

import (
	"context"
	"time"
)

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
	// Seen is the dedup set: every vote read and not yet pruned.
	Seen []Vote
	// Pending are the votes whose reward is not yet delivered, oldest first.
	Pending []Vote
	// Expiries are the delivered votes whose expiry is not yet handled,
	// soonest ExpiresAt first.
	Expiries []Vote
}

// Store keeps a poller's state: the checkpoint, the dedup set and the pending
// deliveries and expiries. Each method is one atomic change: after a crash the
// store holds the state before or after it, never a part. Implementations must
// be safe for concurrent use; the poller calls Ingest from one goroutine and
// Delivered and Expired from its workers. A store serves one poller at a time.
// The dedup key of a vote is (UserID, CreatedAt) as in [VoteKey]; [Vote.Key]
// holds it.
type Store interface {
	// Load returns the whole state; a new store returns a zero Snapshot.
	Load(ctx context.Context) (*Snapshot, error)
	// Ingest saves cp and, for each vote whose key is not in the dedup set
	// (also not earlier in votes), adds it to the set and to the pending
	// deliveries, in one atomic change. It returns the added votes in order.
	Ingest(ctx context.Context, cp Checkpoint, votes []Vote) (added []Vote, err error)
	// Delivered removes v from the pending deliveries and, if expire is true,
	// adds it to the pending expiries, in one atomic change.
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
