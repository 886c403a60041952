package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// ErrTermOver means a leader-only action was not started because this
// process's term as the leader is over (its deadline passed or the lease was
// lost); the term's context is then cancelled with cause [ErrLeaseLost].
var ErrTermOver = clock.ErrTermOver

// CheckTerm returns nil when ctx carries no leader term or its term is valid
// now; else it ends the term and returns an error wrapping [ErrTermOver]. Call
// it right before a leader-only action outside Redis; it makes no request.
func CheckTerm(ctx context.Context) error {
	return clock.CheckTerm(ctx)
}

// term returns the term of a lease won by a request sent at sent; its end
// cancels the leader's context with a cause wrapping [ErrLeaseLost].
func (l *Lease) term(sent time.Time, cancel context.CancelCauseFunc) *clock.Term {
	return clock.NewTerm(l.clock, sent.Add(l.ttl-l.margin), func(cause error) {
		if cause != nil && !errors.Is(cause, ErrLeaseLost) {
			cause = fmt.Errorf("%w: %w", ErrLeaseLost, cause)
		}
		cancel(cause)
	})
}
