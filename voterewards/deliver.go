package voterewards

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/sourcegraph/conc/panics"
	"github.com/sourcegraph/conc/pool"

	"github.com/dblkit/go-topgg/internal/backoff"
	"github.com/dblkit/go-topgg/internal/clock"
)

// queuedPerWorker bounds the votes queued in memory per worker; beyond it the
// fetch loop waits, and the rest of the backlog stays in the store.
const queuedPerWorker = 256

// job is one handler call to make: a reward for a new vote or an expiry.
type job struct {
	kind Kind
	v    Vote
	at   time.Time // event time: CreatedAt for a reward, ExpiresAt for an expiry
}

// jobOrder orders jobs by event time; an expiry goes before a reward of the
// same instant, since a vote that expires at t makes room for one made at t.
func jobOrder(a, b job) int {
	return cmp.Or(a.at.Compare(b.at), -cmp.Compare(a.kind, b.kind))
}

// lane holds the queued jobs of one user, in event order. At most one worker
// runs a lane, which is what keeps a user's calls from overlapping.
type lane struct {
	id   string
	jobs []job
}

func (l *lane) insert(j job) {
	i := len(l.jobs)
	for i > 0 && jobOrder(l.jobs[i-1], j) > 0 {
		i--
	}
	l.jobs = append(l.jobs, job{})
	copy(l.jobs[i+1:], l.jobs[i:])
	l.jobs[i] = j
}

// jobKey identifies a job among those a run knows.
type jobKey struct {
	kind Kind
	key  string
}

// claimState is where a job a run took on stands.
type claimState uint8

const (
	// claimQueued: queued or running.
	claimQueued claimState = iota
	// claimDone: handled and recorded in this run (at says when).
	claimDone
	// claimGivenUp: its handler failed every attempt, or its outcome could
	// not be recorded. It stays pending in the store, and this run takes it
	// again only for [Poller.Redeliver]: an echo of the vote (the store's
	// feed, a resync's reload) must not retry it behind the caller's back.
	claimGivenUp
)

// claimed is a job a run took on.
type claimed struct {
	state claimState
	at    time.Time // when it was done (claimDone)
}

// forgetDone is how long a run remembers a job it finished: long enough for
// the echoes of a vote to arrive (the store's feed reporting a vote this
// process ingested, a reload whose snapshot was taken before the record),
// short enough that the memory holds minutes of votes, not the window.
const forgetDone = 5 * time.Minute

// delivery runs lanes on a bounded pool.
type delivery struct {
	pool  *pool.Pool
	slots chan struct{} // one per queued or running job
	lmu   sync.Mutex
	lanes map[string]*lane
	// known holds the jobs this run took on, so that a vote that reaches it
	// twice (its own Ingest and the store's feed, a reload while the vote is
	// queued or just delivered) is handled once. Done entries are forgotten
	// after forgetDone; given-up entries are kept until Redeliver takes them
	// again; a job abandoned at the end of Run is dropped.
	known map[jobKey]claimed
	// pending counts the rewards claimed and not delivered, those given up
	// included; seq numbers its changes.
	pending int
	seq     uint64

	// omu orders the reports of the pending count: the goroutines that
	// change it report outside lmu, so two reports could reach the observer
	// swapped and leave a stale count; a report older than the last one made
	// is dropped instead.
	omu      sync.Mutex
	reported uint64
}

// pendingReport is a change of the pending count to report: the count, and
// the change's place among the others (0: no change).
type pendingReport struct {
	n   int
	seq uint64
}

// changePending adds delta to the pending count, with lmu held.
func (d *delivery) changePending(delta int) pendingReport {
	d.pending += delta
	d.seq++
	return pendingReport{n: d.pending, seq: d.seq}
}

// report tells the observer of a change of the pending count, unless a
// later change was reported already.
func (r *run) report(c pendingReport) {
	if c.seq == 0 || r.late.Load() {
		return
	}
	r.omu.Lock()
	defer r.omu.Unlock()
	if c.seq <= r.reported {
		return
	}
	r.reported = c.seq
	r.p.observe(Event{Type: EventPending, Pending: c.n})
}

func (d *delivery) init(workers int) {
	d.pool = pool.New().WithMaxGoroutines(workers)
	d.slots = make(chan struct{}, workers*queuedPerWorker)
	d.lanes = map[string]*lane{}
	d.known = map[jobKey]claimed{}
}

// claim takes on the job of kind for v, reporting false if this run has it
// already (a given-up job is taken again if retake), and tells the observer
// of a new pending reward. It is for jobs that do not go to a lane at once
// (a future expiry); queue claims the others.
func (r *run) claim(kind Kind, v Vote, retake bool) bool {
	r.lmu.Lock()
	ok, change := r.claimLocked(kind, v, retake)
	r.lmu.Unlock()
	r.report(change)
	return ok
}

// claimLocked takes on the job, with lmu held, and returns the change of the
// pending count to report.
func (d *delivery) claimLocked(kind Kind, v Vote, retake bool) (bool, pendingReport) {
	k := jobKey{kind, v.Key()}
	if c, ok := d.known[k]; ok {
		if c.state != claimGivenUp || !retake {
			return false, pendingReport{}
		}
		// Counted as pending when it was first claimed.
		d.known[k] = claimed{state: claimQueued}
		return true, pendingReport{}
	}
	d.known[k] = claimed{state: claimQueued}
	if kind != KindReward {
		return true, pendingReport{}
	}
	return true, d.changePending(1)
}

// outcome is how a claimed job ended in this run.
type outcome uint8

const (
	outcomeDone      outcome = iota // handled and recorded
	outcomeGivenUp                  // failed every attempt, or not recorded
	outcomeAbandoned                // cut short by the end of Run
)

// settle records how a claimed job ended at now, and ends a reward's place
// in the pending count unless it stays pending (given up).
func (r *run) settle(kind Kind, v Vote, o outcome, now time.Time) {
	k := jobKey{kind, v.Key()}
	r.lmu.Lock()
	switch o {
	case outcomeDone:
		r.known[k] = claimed{state: claimDone, at: now}
	case outcomeGivenUp:
		r.known[k] = claimed{state: claimGivenUp}
	case outcomeAbandoned:
		delete(r.known, k)
	}
	if kind != KindReward || o == outcomeGivenUp {
		r.lmu.Unlock()
		return
	}
	change := r.changePending(-1)
	r.lmu.Unlock()
	r.report(change)
}

// forget drops the jobs done before t.
func (d *delivery) forget(t time.Time) {
	d.lmu.Lock()
	defer d.lmu.Unlock()
	for k, c := range d.known {
		if c.state == claimDone && c.at.Before(t) {
			delete(d.known, k)
		}
	}
}

// holds reports whether claiming j would fail now: skipping j on that answer
// is what a claim made a moment earlier would have done.
func (d *delivery) holds(j job, retake bool) bool {
	d.lmu.Lock()
	defer d.lmu.Unlock()
	c, ok := d.known[jobKey{j.kind, j.v.Key()}]
	return ok && (c.state != claimGivenUp || !retake)
}

// admit claims j (a given-up one too if retake) and queues it, in one step
// under lmu: two paths that bring the same votes (the poll and the store's
// feed echo, a reload) cannot interleave so that a user's later vote is
// queued, and started, before an earlier one that the other path claimed
// and had not queued yet. A job this run has already is skipped. It reports
// false if ctx ended while it waited for room (j then stays pending).
func (r *run) admit(ctx context.Context, j job, retake bool) bool {
	return r.queue(ctx, j, true, retake)
}

// enqueue queues j, already claimed, behind the user's earlier jobs,
// starting a worker for the user if none runs. It waits while the queue is
// full, and reports false if ctx ended first (j then stays pending in the
// store).
func (r *run) enqueue(ctx context.Context, j job) bool {
	return r.queue(ctx, j, false, false)
}

func (r *run) queue(ctx context.Context, j job, claim, retake bool) bool {
	if claim && r.holds(j, retake) {
		// An echo of a job this run has: skipped without waiting for room.
		return true
	}
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	id := j.v.lane()
	r.lmu.Lock()
	var change pendingReport
	if claim {
		var ok bool
		if ok, change = r.claimLocked(j.kind, j.v, retake); !ok {
			r.lmu.Unlock()
			<-r.slots
			return true
		}
	}
	l, running := r.lanes[id]
	if running {
		l.insert(j)
	} else {
		l = &lane{id: id, jobs: []job{j}}
		r.lanes[id] = l
	}
	r.lmu.Unlock()
	r.report(change)
	if !running {
		// Blocks while every worker is busy: the backpressure on the fetch loop.
		r.pool.Go(func() { r.runLane(l) })
	}
	return true
}

// runLane handles the user's jobs one after another until none is left, or
// until Run's context is done, which leaves the rest pending in the store.
func (r *run) runLane(l *lane) {
	for {
		r.lmu.Lock()
		if len(l.jobs) == 0 || r.stopping() {
			n := len(l.jobs)
			l.jobs = nil
			delete(r.lanes, l.id)
			r.lmu.Unlock()
			for range n {
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

// process makes the handler call of j with retries, records the outcome, and
// returns a follow-up job: the expiry of a delivered vote that has already
// expired, which must run before the user's next vote. A job whose handler
// failed every attempt is not recorded: it stays pending in the store.
func (r *run) process(j job) (job, bool) {
	attempts, err := r.attempt(j)
	if r.late.Load() {
		// Run returned without this call (it ignored its cancelled
		// context): its outcome is dropped, and the vote stays pending.
		return job{}, false
	}
	if err != nil {
		if errors.Is(err, errAbandoned) {
			r.settle(j.kind, j.v, outcomeAbandoned, time.Time{})
			return job{}, false
		}
		r.settle(j.kind, j.v, outcomeGivenUp, time.Time{})
		r.log.Error("giving up on vote for this run; it stays pending", slog.String("kind", j.kind.String()), slog.String("key", j.v.Key()),
			slog.Int("attempts", attempts), slog.Any("error", err))
		r.giveUp(j.kind, j.v, &DeliveryError{Kind: j.kind, Key: j.v.Key(), Attempts: attempts, Err: err})
		return job{}, false
	}
	if j.kind == KindExpiry {
		// If this fails, the expiry stays pending, for Redeliver or the next Run.
		if r.record(j, func(ctx context.Context) error { return r.p.store.Expired(ctx, j.v) }) {
			r.settle(j.kind, j.v, outcomeDone, r.p.cfg.clock.Now())
			r.p.observe(Event{Type: EventDelivered, Kind: KindExpiry, Origin: j.v.Origin})
		} else {
			r.settle(j.kind, j.v, outcomeGivenUp, time.Time{})
		}
		return job{}, false
	}
	expire := r.p.cfg.OnExpire != nil
	if !r.record(j, func(ctx context.Context) error { return r.p.store.Delivered(ctx, j.v, expire) }) {
		// Still pending in the store: delivered again by Redeliver or the
		// next Run, and its expiry scheduled then.
		r.settle(j.kind, j.v, outcomeGivenUp, time.Time{})
		return job{}, false
	}
	now := r.p.cfg.clock.Now()
	r.settle(j.kind, j.v, outcomeDone, now)
	r.p.observe(Event{Type: EventDelivered, Kind: KindReward, Origin: j.v.Origin, Latency: now.Sub(j.v.CreatedAt)})
	if !expire || !r.claim(KindExpiry, j.v, false) {
		return job{}, false
	}
	if !j.v.ExpiresAt.After(r.p.cfg.clock.Now()) {
		return job{kind: KindExpiry, v: j.v, at: j.v.ExpiresAt}, true
	}
	r.scheduleExpiry(j.v)
	return job{}, false
}

// record writes the outcome of j to the store, retrying a failed write as a
// failed handler is retried (RetryDelay, doubling, MaxAttempts times), and
// reports whether it succeeded. The end of Run stops the retries but not the
// first write: an outcome reached as Run ends is still recorded. A write that
// finally fails is logged and passed to OnGiveUp as a *RecordError.
func (r *run) record(j job, write func(context.Context) error) bool {
	// Not cancelled with the handlers: a completed delivery is worth recording.
	ctx := context.WithoutCancel(r.hctx)
	for n := 1; ; n++ {
		err := write(ctx)
		if err == nil {
			return true
		}
		if n < r.p.cfg.MaxAttempts {
			delay := retryWait(n, r.p.cfg.RetryDelay)
			r.log.Warn("recording the outcome failed; retrying", slog.String("kind", j.kind.String()), slog.String("key", j.v.Key()),
				slog.Int("attempt", n), slog.Duration("delay", delay), slog.Any("error", err))
			if r.sleep(r.stop, delay) == nil {
				continue
			}
		}
		rerr := &RecordError{Kind: j.kind, Key: j.v.Key(), Attempts: n, Err: err}
		r.log.Error("recording the outcome failed; the vote stays pending",
			slog.String("kind", j.kind.String()), slog.String("key", j.v.Key()), slog.Int("attempts", n), slog.Any("error", err))
		r.giveUp(j.kind, j.v, rerr)
		return false
	}
}

// attempt calls the handler until it succeeds or MaxAttempts is reached,
// waiting RetryDelay (doubling, with jitter) between calls. It returns
// errAbandoned if the end of Run interrupted it.
func (r *run) attempt(j job) (int, error) {
	for n := 1; ; n++ {
		if n > 1 {
			r.p.observe(Event{Type: EventRetried, Kind: j.kind, Origin: j.v.Origin, Attempt: n})
		}
		err := r.call(j)
		if err == nil {
			return n, nil
		}
		if r.hctx.Err() != nil {
			// Cancelled at the end of the grace period: not the handler's
			// fault; try again next run.
			return n, errAbandoned
		}
		if n >= r.p.cfg.MaxAttempts {
			return n, err
		}
		delay := retryWait(n, r.p.cfg.RetryDelay)
		r.log.Warn("handler failed; retrying", slog.String("kind", j.kind.String()), slog.String("key", j.v.Key()),
			slog.Int("attempt", n), slog.Duration("delay", delay), slog.Any("error", err))
		if r.sleep(r.stop, delay) != nil {
			return n, errAbandoned
		}
	}
}

// call runs one handler call, turning a panic into a *PanicError.
func (r *run) call(j job) (err error) {
	h := r.p.cfg.OnReward
	if j.kind == KindExpiry {
		h = r.p.cfg.OnExpire
	}
	if rec := panics.Try(func() { err = h(r.hctx, j.v) }); rec != nil {
		return &PanicError{Value: rec.Value, Stack: rec.Stack}
	}
	return err
}

// giveUp tells the observer, and passes err to OnGiveUp, if set, containing a
// panic of it.
func (r *run) giveUp(kind Kind, v Vote, err error) {
	if r.late.Load() {
		return // Run has returned: nobody is to hear of this run any more
	}
	r.p.observe(Event{Type: EventGivenUp, Kind: kind, Origin: v.Origin})
	if r.p.cfg.OnGiveUp == nil {
		return
	}
	if rec := panics.Try(func() { r.p.cfg.OnGiveUp(v, err) }); rec != nil {
		r.log.Error("OnGiveUp panicked", slog.String("key", v.Key()), slog.Any("panic", rec.Value))
	}
}

// sleep waits d on the poller's clock, or until ctx is done (then its error).
func (r *run) sleep(ctx context.Context, d time.Duration) error {
	return clock.Sleep(ctx, r.p.cfg.clock, d)
}

// retryWait is the wait before retry n: first, doubling, capped, jittered.
func retryWait(n int, first time.Duration) time.Duration {
	return backoff.Exp(n, first, maxRetryDelay)
}
