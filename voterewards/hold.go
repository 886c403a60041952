package voterewards

import (
	"errors"
	"log/slog"
	"time"
)

// ErrStoreFailed, wrapped in a handler's error, says the store failed, not
// the handler (pgstore's transactional handlers wrap it): the call counts as
// no attempt, and the vote is delivered again once the store answers.
var ErrStoreFailed = errors.New("voterewards: the store failed")

// errHeld: the store failed, so the job was not started; a reload takes it again.
var errHeld = errors.New("voterewards: held while the store fails")

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

// hold leaves j pending and asks for a reload after holdWait, which takes it again.
func (r *run) hold(j job) {
	r.settle(j.expiry, j.v, claimHeld, time.Time{})
	r.in.ask(false, true)
}

// holdWait is the wait before a reload that takes held jobs again: doubling
// with each outage since the last write that succeeded, capped at a minute.
func (r *run) holdWait() time.Duration {
	return retryWait(int(max(r.downs.Load(), 1)), r.p.cfg.RetryDelay)
}
