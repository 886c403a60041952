package voterewards

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sourcegraph/conc/panics"
	"github.com/sourcegraph/conc/pool"

	"github.com/dblkit/go-topgg/internal/clock"
)

const (
	queuedPerWorker = 256 // bounds the votes queued in memory per worker
	// forgetDone is how long a run remembers a finished job: long enough for a
	// vote's echoes to arrive, short enough not to hold the whole window.
	forgetDone = 5 * time.Minute
)

// job is one handler call to make: OnReward's for a new vote, or OnExpire's.
type job struct {
	v      Vote
	expiry bool
	at     time.Time // event time: CreatedAt for a reward, ExpiresAt for an expiry
}

// jobOrder orders jobs by event time; an expiry goes before a reward of the
// same instant, since a vote that expires at t makes room for one made at t.
func jobOrder(a, b job) int {
	if c := a.at.Compare(b.at); c != 0 || a.expiry == b.expiry {
		return c
	}
	if a.expiry {
		return -1
	}
	return 1
}

// lane holds one user's queued jobs in event order; one worker at most runs it.
type lane struct {
	id   string
	jobs []job
}

func (l *lane) insert(j job) {
	i := len(l.jobs)
	for i > 0 && jobOrder(l.jobs[i-1], j) > 0 {
		i--
	}
	l.jobs = slices.Insert(l.jobs, i, j)
}

type jobKey struct {
	expiry bool
	key    string
}

// claimState is where a job a run took on stands.
type claimState uint8

const (
	claimQueued  claimState = iota // queued or running
	claimDone                      // handled and recorded in this run
	claimGivenUp                   // failed or not recorded: taken again by Redeliver, not by an echo
	claimHeld                      // not started while the store failed: taken again by any reload
	claimDropped                   // cut short by the end of Run: forgotten (settle only)
)

type claimed struct {
	state claimState
	at    time.Time // when it was done (claimDone)
}

// blocks reports whether c keeps a job from being claimed again.
func (c claimed) blocks(retake bool) bool {
	return c.state == claimQueued || c.state == claimDone || c.state == claimGivenUp && !retake
}

// delivery runs lanes on a bounded pool.
type delivery struct {
	pool    *pool.Pool
	slots   chan struct{} // one per queued or running job
	lmu     sync.Mutex
	lanes   map[string]*lane
	known   map[jobKey]claimed // the jobs this run took on: a vote that reaches it twice is handled once
	pending int                // the rewards claimed and not delivered, given up included
}

// changePending adds delta to the pending count and reports it: under lmu, so in order.
func (r *run) changePending(delta int) {
	r.pending += delta
	if !r.late.Load() {
		r.p.observe(Event{Type: EventPending, Pending: r.pending})
	}
}

// claim takes on a job that does not go to a lane at once (a future expiry),
// reporting false if this run has it (a given-up one is taken if retake).
func (r *run) claim(expiry bool, v Vote, retake bool) bool {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	return r.claimLocked(expiry, v, retake)
}

// claimLocked is claim with lmu held.
func (r *run) claimLocked(expiry bool, v Vote, retake bool) bool {
	k := jobKey{expiry, v.Key()}
	c, ok := r.known[k]
	if ok && c.blocks(retake) {
		return false
	}
	r.known[k] = claimed{state: claimQueued}
	if !ok && !expiry { // a given-up or held one is counted already
		r.changePending(1)
	}
	return true
}

// settle records how a claimed job ended (at now, if done), and counts a
// reward out unless it stays pending in this run (given up or held).
func (r *run) settle(expiry bool, v Vote, state claimState, now time.Time) {
	k := jobKey{expiry, v.Key()}
	r.lmu.Lock()
	if state == claimDropped {
		delete(r.known, k)
	} else {
		r.known[k] = claimed{state: state, at: now}
	}
	if !expiry && state != claimGivenUp && state != claimHeld {
		r.changePending(-1)
	}
	r.lmu.Unlock()
}

// holds reports whether claiming j would fail now.
func (d *delivery) holds(j job, retake bool) bool {
	d.lmu.Lock()
	defer d.lmu.Unlock()
	c, ok := d.known[jobKey{j.expiry, j.v.Key()}]
	return ok && c.blocks(retake)
}

// admit queues j on its voter's lane, claimed first if claim, in one step under
// lmu: two paths bringing the same votes cannot queue a user's later vote
// first. It reports false if ctx ended while it waited for room.
func (r *run) admit(ctx context.Context, j job, claim, retake bool) bool {
	if claim && r.holds(j, retake) { // an echo: skipped without waiting for room
		return true
	}
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	id := voterID(j.v.Vote)
	r.lmu.Lock()
	if claim && !r.claimLocked(j.expiry, j.v, retake) {
		r.lmu.Unlock()
		<-r.slots
		return true
	}
	l, running := r.lanes[id]
	if running {
		l.insert(j)
	} else {
		l = &lane{id: id, jobs: []job{j}}
		r.lanes[id] = l
	}
	r.lmu.Unlock()
	if !running { // blocks while every worker is busy: the fetch loop's backpressure
		r.pool.Go(func() { r.runLane(l) })
	}
	return true
}

// runLane handles the user's jobs until none is left or Run's context is done.
func (r *run) runLane(l *lane) {
	for {
		r.lmu.Lock()
		if len(l.jobs) == 0 || r.stop.Err() != nil {
			delete(r.lanes, l.id)
			r.lmu.Unlock()
			for range l.jobs { // cut short by the end of Run
				<-r.slots
			}
			return
		}
		j := l.jobs[0]
		l.jobs = l.jobs[1:]
		r.lmu.Unlock()

		if next, ok := r.process(j); ok {
			// The follow-up takes over j's slot.
			r.lmu.Lock()
			l.insert(next)
			r.lmu.Unlock()
			continue
		}
		<-r.slots
	}
}

// process calls j's handler with retries, records the outcome, and returns a
// follow-up: the due expiry of the delivered vote, before the user's next.
func (r *run) process(j job) (job, bool) {
	attempts, err := r.attempt(j)
	switch {
	case r.late.Load(): // Run returned without this call: dropped, still pending
		return job{}, false
	case errors.Is(err, errAbandoned):
		r.settle(j.expiry, j.v, claimDropped, time.Time{})
		return job{}, false
	case errors.Is(err, errHeld): // left pending: the reload after the hold's wait takes it again
		r.settle(j.expiry, j.v, claimHeld, time.Time{})
		r.in.ask(false, true)
		return job{}, false
	case err != nil:
		r.settle(j.expiry, j.v, claimGivenUp, time.Time{})
		r.giveUp(j, &DeliveryError{Expiry: j.expiry, attempts: attempts, key: j.v.Key(), err: err}, "giving up on vote for this run; it stays pending")
		return job{}, false
	}
	expire := !j.expiry && r.p.cfg.OnExpire != nil
	write := func(ctx context.Context) error { return r.p.cfg.Store.Delivered(ctx, j.v, expire) }
	if j.expiry {
		write = func(ctx context.Context) error { return r.p.cfg.Store.Expired(ctx, j.v) }
	}
	if !r.record(j, write) { // still pending, for Redeliver or the next Run
		r.settle(j.expiry, j.v, claimGivenUp, time.Time{})
		return job{}, false
	}
	now := r.p.cfg.clock.Now()
	r.settle(j.expiry, j.v, claimDone, now)
	e := Event{Type: EventDelivered, Expiry: j.expiry, Origin: j.v.Origin}
	if !j.expiry {
		e.Latency = now.Sub(j.v.CreatedAt)
	}
	r.p.observe(e)
	if !expire || !r.claim(true, j.v, false) {
		return job{}, false
	}
	if !j.v.ExpiresAt.After(r.p.cfg.clock.Now()) {
		return job{v: j.v, expiry: true, at: j.v.ExpiresAt}, true
	}
	r.scheduleExpiry(j.v)
	return job{}, false
}

// record writes j's outcome, retried as a handler is, and reports whether it
// succeeded; the end of Run stops the retries, not the first write.
func (r *run) record(j job, write func(context.Context) error) bool {
	// Not cancelled with the handlers: a completed delivery is worth recording.
	ctx := context.WithoutCancel(r.hctx)
	for n := 1; ; n++ {
		err := write(ctx)
		if err == nil {
			r.storeAnswered(true)
			return true
		}
		r.storeFailed(err)
		if n >= r.p.cfg.MaxAttempts || !r.retry(j, n, "recording the outcome failed; retrying", err) {
			r.giveUp(j, &DeliveryError{Expiry: j.expiry, attempts: n, Recording: true, key: j.v.Key(), err: err},
				"recording the outcome failed; the vote stays pending")
			r.in.ask(false, true) // a write may have committed: a reload takes the expiry it added
			return false
		}
	}
}

// attempt calls the handler until it succeeds or MaxAttempts is reached (errAbandoned: Run ended it).
func (r *run) attempt(j job) (int, error) {
	for n := 1; ; n++ {
		if clock.CheckTerm(r.hctx) != nil {
			// A leader past its term calls no handler: the vote stays pending.
			return n - 1, errAbandoned
		}
		if r.storeDown.Load() {
			return n - 1, errHeld
		}
		if n > 1 {
			r.p.observe(Event{Type: EventRetried, Expiry: j.expiry, Origin: j.v.Origin})
		}
		err := r.call(j)
		switch {
		case err == nil:
			return n, nil
		case r.hctx.Err() != nil: // cancelled after the grace period: next run
			return n, errAbandoned
		case errors.Is(err, ErrStoreFailed): // not the handler's failure: no attempt
			r.storeFailed(err)
			return n - 1, errHeld
		case n >= r.p.cfg.MaxAttempts:
			return n, err
		case !r.retry(j, n, "handler failed; retrying", err):
			return n, errAbandoned
		}
	}
}

// retry logs failed attempt n and waits; false if Run's context ended the wait.
func (r *run) retry(j job, n int, msg string, err error) bool {
	delay := retryWait(n, r.p.cfg.RetryDelay)
	r.log.Warn(msg, slog.Bool("expiry", j.expiry), slog.String("key", j.v.Key()),
		slog.Int("attempt", n), slog.Duration("delay", delay), slog.Any("error", err))
	return r.sleep(r.stop, delay) == nil
}

// call runs one handler call, turning a panic into an error.
func (r *run) call(j job) (err error) {
	h := r.p.cfg.OnReward
	if j.expiry {
		h = r.p.cfg.OnExpire
	}
	if rec := panics.Try(func() { err = h(r.hctx, j.v) }); rec != nil {
		return rec.AsError()
	}
	return err
}

// giveUp logs msg and tells the observer and OnGiveUp, containing a panic of it.
func (r *run) giveUp(j job, err *DeliveryError, msg string) {
	r.log.Error(msg, slog.Bool("expiry", j.expiry), slog.String("key", err.key),
		slog.Int("attempts", err.attempts), slog.Any("error", err.err))
	if r.late.Load() {
		return // Run has returned: nobody is to hear of this run any more
	}
	r.p.observe(Event{Type: EventGivenUp, Expiry: j.expiry, Origin: j.v.Origin})
	if r.p.cfg.OnGiveUp != nil {
		r.p.contain("OnGiveUp", func() { r.p.cfg.OnGiveUp(j.v, err) }, slog.String("key", err.key))
	}
}

// sleep waits d on the poller's clock, or until ctx is done.
func (r *run) sleep(ctx context.Context, d time.Duration) error {
	return clock.Sleep(ctx, r.p.cfg.clock, d)
}

// retryWait is the wait before retry n: first, doubling, capped, jittered.
func retryWait(n int, first time.Duration) time.Duration {
	return clock.Backoff(n, first, maxRetryDelay)
}
