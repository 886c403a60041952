package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dblkit/go-topgg/internal/term"
)

// ErrTermOver means a leader-only action was not started because this
// process's term as the leader is over: the deadline of its lease (the send
// time of the last successful renewal, plus TTL, minus TTL/5), read on the
// local monotonic clock, has passed, or the lease was lost. A process
// resumed after a pause past its lease gets it from the first action it
// tries, and its term's context is cancelled then (cause [ErrLeaseLost]).
var ErrTermOver = term.ErrOver

// CheckTerm returns nil when ctx carries no leader term (it does not come
// from [Lease.Run]'s function: one process, which always leads) or when its
// term is valid now, on the local monotonic clock; else an error wrapping
// [ErrTermOver], having ended the term. Call it right before an action only
// the leader may take outside Redis (a request to Discord in a reward
// handler, say): the plugin's jobs already call it before each of theirs.
// It makes no request, takes no lock and allocates nothing (50-170 ns).
func CheckTerm(ctx context.Context) error {
	return term.Check(ctx)
}

// term returns the term of a lease won by a request sent at sent: valid
// until sent+TTL-TTL/5, then renewed by keep. Its end cancels the leader's
// context with a cause wrapping [ErrLeaseLost].
func (l *Lease) term(sent time.Time, cancel context.CancelCauseFunc) *term.Term {
	return term.New(l.clock, sent.Add(l.ttl-l.margin), func(cause error) {
		if cause != nil && !errors.Is(cause, ErrLeaseLost) {
			cause = fmt.Errorf("%w: %w", ErrLeaseLost, cause)
		}
		cancel(cause)
	})
}
