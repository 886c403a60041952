// Package term is a fleet leader's term: the time until which this process
// may act as the leader. The lease sets its deadline (the send time of the
// last successful renewal, plus the lease's TTL, minus a safety margin) and
// moves it on each renewal; every leader-only action calls [Check] right
// before it starts. The deadline is read on the local monotonic clock, so a
// process resumed after a pause past its deadline (SIGSTOP, a VM frozen, a
// long GC stop) starts nothing: it does not depend on which of its goroutines
// the scheduler runs first after the pause, as a cancelled context does.
//
// The term travels in the leader work's context ([With]), so that a job
// reached through several packages needs no new parameter; outside a fleet
// the context carries none and [Check] always passes.
package term

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// ErrOver means the leader's term is over: its deadline passed (or the lease
// was lost, or the term's work ended), so no leader-only action may start.
// fleet.ErrTermOver is this error.
var ErrOver = errors.New("the leader's term is over")

// ended is the deadline offset of a term ended by [Term.End]: before any
// time.
const ended = math.MinInt64

// Term is one leader term. Make it with [New]; its methods are safe for
// concurrent use, and cost no lock: the deadline is one atomic word.
// A nil or zero Term is no valid term: its Check fails, it never panics.
type Term struct {
	clock clock.Clock
	// base is the first deadline, read with its monotonic clock reading:
	// deadlines are kept as offsets from it, so that comparing them uses the
	// monotonic clock (a wall-clock step cannot lengthen the term).
	base  time.Time
	until atomic.Int64 // deadline - base, in nanoseconds; ended once over
	end   func(cause error)
	once  sync.Once
}

// New returns a term that lasts until deadline, read on c (nil: the real
// clock), deadline taken from the same clock so that it has a monotonic
// reading. end, if not nil, is called once, with the cause, when the term
// ends: by [Term.End], or by the first [Term.Check] that finds the deadline
// passed. The lease passes the cancel function of the leader's context, so
// that the term's jobs stop at once.
func New(c clock.Clock, deadline time.Time, end func(cause error)) *Term {
	return &Term{clock: clock.Or(c), base: deadline, end: end}
}

// Extend moves the deadline to deadline if that is later, unless the term
// has ended: a term never comes back.
func (t *Term) Extend(deadline time.Time) {
	if !t.made() {
		return
	}
	next := int64(deadline.Sub(t.base))
	for {
		cur := t.until.Load()
		if cur == ended || next <= cur {
			return
		}
		if t.until.CompareAndSwap(cur, next) {
			return
		}
	}
}

// End ends the term for cause (the lease was lost, the work returned): every
// later Check fails. The first call calls the end function given to [New].
func (t *Term) End(cause error) {
	if t == nil {
		return
	}
	t.until.Store(ended)
	t.once.Do(func() {
		if t.end != nil {
			t.end(cause)
		}
	})
}

// made reports whether t was made by New: a nil or zero Term is no term,
// and every check of it fails (closed, not open).
func (t *Term) made() bool { return t != nil && t.clock != nil }

// Left returns the time left before the deadline on the term's clock:
// zero or less once it passed, and ok false once the term ended (or t was
// not made by [New]).
func (t *Term) Left() (left time.Duration, ok bool) {
	if !t.made() {
		return 0, false
	}
	until := t.until.Load()
	if until == ended {
		return 0, false
	}
	elapsed := t.clock.Now().Sub(t.base) // negative before the first deadline
	if elapsed < 0 && until > math.MaxInt64+int64(elapsed) {
		return math.MaxInt64, true // saturated: a deadline centuries ahead must not wrap around
	}
	return time.Duration(until) - elapsed, true
}

// Check returns nil while the deadline is ahead, else an error wrapping
// [ErrOver]; the first Check that finds the deadline passed ends the term.
func (t *Term) Check() error {
	left, ok := t.Left()
	switch {
	case !t.made():
		return fmt.Errorf("%w: no term (not made by term.New)", ErrOver)
	case !ok:
		return fmt.Errorf("%w: it ended", ErrOver)
	case left > 0:
		return nil
	}
	err := fmt.Errorf("%w: its deadline passed %v ago (a pause, or renewals that failed)", ErrOver, -left)
	t.End(err)
	return err
}

// ctxKey is the context key of the term.
type ctxKey struct{}

// With returns a context that carries t, for the leader's work.
func With(ctx context.Context, t *Term) context.Context {
	return context.WithValue(ctx, ctxKey{}, t)
}

// From returns the term ctx carries, or nil.
func From(ctx context.Context) *Term {
	t, _ := ctx.Value(ctxKey{}).(*Term)
	return t
}

// Check returns nil when ctx carries no term (one process: it always
// leads) or when its term is valid now; else an error wrapping [ErrOver],
// having ended the term (and so cancelled the leader's context). Call it
// right before each leader-only action: a request to Top.gg, a handler call,
// a message sent; what is left between the check and the action is the
// window in which a pause can still let a stale leader act. A context given
// a nil term by [With] fails: it is a leader's work with no valid term.
func Check(ctx context.Context) error {
	if v := ctx.Value(ctxKey{}); v != nil {
		t, _ := v.(*Term)
		return t.Check()
	}
	return nil
}
