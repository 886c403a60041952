package voterewards

import (
	"errors"
	"log/slog"
)

// ErrStoreFailed, wrapped in a handler's error, says the store failed, not
// the handler (pgstore's transactional handlers wrap it): the call counts as
// no attempt, and the vote is delivered again once the store answers.
var ErrStoreFailed = errors.New("voterewards: the store failed")

// storeFailed notes a failed store write: from now on no handler call starts
// until a load answers, so a failover duplicates at most the calls in flight.
func (r *run) storeFailed(err error) {
	if !r.storeDown.Swap(true) && r.downs.Add(1) == 1 {
		r.log.Warn("store failed; starting no handler call until it answers", slog.Any("error", err))
	}
}

// storeAnswered notes a store that answered a load, or a write, which ends the outage.
func (r *run) storeAnswered(write bool) {
	r.storeDown.Store(false)
	if write && r.downs.Swap(0) > 0 {
		r.log.Info("store answers again; deliveries resumed")
	}
}
