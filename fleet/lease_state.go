package fleet

import (
	"context"
	"errors"
	"runtime/debug"
)

// LeaseState is a snapshot of one Lease's leadership.
type LeaseState struct {
	// Leader is true while this process runs the leader function.
	Leader bool
	// Token is the fencing token of the current term (0 when not leader).
	Token int64
	// known is true while this process knows who leads ([Lease.Check]); a
	// change of known alone does not call OnChange.
	known bool
}

// ErrLeadershipUnknown is [Lease.Check]'s error while this process does not
// know who leads.
var ErrLeadershipUnknown = errors.New("fleet: leadership unknown (the lease is not running, or Redis cannot be reached)")

// Check is a readiness check: nil while this process knows who leads the
// fleet, else an error wrapping [ErrLeadershipUnknown]. It makes no request.
func (l *Lease) Check(context.Context) error {
	if !l.State().known {
		return ErrLeadershipUnknown
	}
	return nil
}

// setKnown records whether this process knows who leads.
func (l *Lease) setKnown(known bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state.known = known
}

// State returns the current leadership state. Safe for concurrent use.
func (l *Lease) State() LeaseState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// setState records a transition and calls the OnChange hook outside the lock.
func (l *Lease) setState(leader bool, token int64) {
	l.mu.Lock()
	// A leader knows; a term's end leaves it unknown until the next answer.
	l.state = LeaseState{Leader: leader, Token: token, known: leader}
	s := l.state
	l.mu.Unlock()
	if l.onChange != nil {
		l.tellChange(s)
	}
}

// tellChange calls OnChange, containing a panic.
func (l *Lease) tellChange(s LeaseState) {
	defer func() {
		if rec := recover(); rec != nil {
			attrs := []any{"leader", s.Leader, "panic", rec}
			if l.panicked.CompareAndSwap(false, true) { // the stack once, not once per change
				attrs = append(attrs, "stack", string(debug.Stack()))
			}
			l.log.Error("OnChange panicked", attrs...)
		}
	}()
	l.onChange(s)
}
