// This file: a fleet leader's term: the time until which this process
// may act as the leader, on the local monotonic clock, so that a process
// resumed after a pause past its deadline starts nothing. Every leader-only
// action calls [CheckTerm] right before it starts; the term travels in the
// leader's context ([WithTerm]), and outside a fleet [CheckTerm] always passes.

package clock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// ErrTermOver means the leader's term is over, so no leader-only action may
// start. fleet.ErrTermOver is this error.
var ErrTermOver = errors.New("the leader's term is over")

// ended is the deadline offset of a term ended by [Term.End].
const ended = math.MinInt64

// Term is one leader term. Make it with [NewTerm]; safe for concurrent use. A
// nil or zero Term is no valid term: its Check fails, it never panics.
type Term struct {
	clock Clock
	// base is the first deadline with its monotonic reading; deadlines are
	// offsets from it, so a wall-clock step cannot lengthen the term.
	base  time.Time
	until atomic.Int64 // deadline - base, in nanoseconds; ended once over
	end   func(cause error)
	once  sync.Once
}

// NewTerm returns a term that lasts until deadline, taken from c (nil: the real
// clock). end, if not nil, is called once with the cause when the term ends,
// by [Term.End] or the first [Term.Check] past the deadline.
func NewTerm(c Clock, deadline time.Time, end func(cause error)) *Term {
	return &Term{clock: Or(c), base: deadline, end: end}
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

// End ends the term for cause: every later Check fails. The first call calls
// the end function given to [NewTerm].
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

// made reports whether t was made by NewTerm: a nil or zero Term is no term,
// and every check of it fails (closed, not open).
func (t *Term) made() bool { return t != nil && t.clock != nil }

// Left returns the time left before the deadline on the term's clock:
// zero or less once it passed, and ok false once the term ended (or t was
// not made by [NewTerm]).
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
// [ErrTermOver]; the first Check that finds the deadline passed ends the term.
func (t *Term) Check() error {
	left, ok := t.Left()
	switch {
	case !t.made():
		return fmt.Errorf("%w: no term (not made by NewTerm)", ErrTermOver)
	case !ok:
		return fmt.Errorf("%w: it ended", ErrTermOver)
	case left > 0:
		return nil
	}
	err := fmt.Errorf("%w: its deadline passed %v ago (a pause, or renewals that failed)", ErrTermOver, -left)
	t.End(err)
	return err
}

// ctxKey is the context key of the term.
type ctxKey struct{}

// WithTerm returns a context that carries t, for the leader's work.
func WithTerm(ctx context.Context, t *Term) context.Context {
	return context.WithValue(ctx, ctxKey{}, t)
}

// TermFrom returns the term ctx carries, or nil.
func TermFrom(ctx context.Context) *Term {
	t, _ := ctx.Value(ctxKey{}).(*Term)
	return t
}

// CheckTerm returns nil when ctx carries no term or its term is valid now; else
// it ends the term and returns an error wrapping [ErrTermOver]. A nil term given
// to [WithTerm] fails. Call it right before each leader-only action.
func CheckTerm(ctx context.Context) error {
	if v := ctx.Value(ctxKey{}); v != nil {
		t, _ := v.(*Term)
		return t.Check()
	}
	return nil
}
