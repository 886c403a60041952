package fleet

import "time"

// LeaseState is a snapshot of one Lease's leadership, for metrics and health
// checks.
type LeaseState struct {
	// Leader is true while this process runs the leader function under a
	// lease it holds.
	Leader bool
	// Token is the fencing token of the current term (0 when not leader).
	Token int64
	// Changes counts the transitions (becoming leader or ceasing to be) since
	// the Lease was made.
	Changes uint64
	// Since is when the current state began (zero before the first change).
	Since time.Time
}

// State returns the current leadership state. Safe for concurrent use.
func (l *Lease) State() LeaseState {
	if l == nil || l.rdb == nil {
		return LeaseState{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// setState records a transition and calls the OnChange hook outside the lock.
func (l *Lease) setState(leader bool, token int64) {
	l.mu.Lock()
	l.state = LeaseState{Leader: leader, Token: token, Changes: l.state.Changes + 1, Since: l.clock.Now()}
	s := l.state
	l.mu.Unlock()
	if l.onChange != nil {
		l.onChange(s)
	}
}
