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

// delivery runs lanes on a bounded pool.
type delivery struct {
	pool  *pool.Pool
	slots chan struct{} // one per queued or running job
	lmu   sync.Mutex
	lanes map[string]*lane
}

func (d *delivery) init(workers int) {
	d.pool = pool.New().WithMaxGoroutines(workers)
	d.slots = make(chan struct{}, workers*queuedPerWorker)
	d.lanes = map[string]*lane{}
}

// enqueue queues j behind the user's earlier jobs, starting a worker for the
// user if none runs. It waits while the queue is full, and reports false if
// ctx ended first (j then stays pending in the store).
func (p *Poller) enqueue(ctx context.Context, j job) bool {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	id := j.v.lane()
	p.lmu.Lock()
	if l, ok := p.lanes[id]; ok {
		l.insert(j)
		p.lmu.Unlock()
		return true
	}
	l := &lane{id: id, jobs: []job{j}}
	p.lanes[id] = l
	p.lmu.Unlock()
	// Blocks while every worker is busy: the backpressure on the fetch loop.
	p.pool.Go(func() { p.runLane(l) })
	return true
}

// runLane handles the user's jobs one after another until none is left, or
// until Close, which leaves the rest pending in the store.
func (p *Poller) runLane(l *lane) {
	for {
		p.lmu.Lock()
		if len(l.jobs) == 0 || p.stopping() {
			n := len(l.jobs)
			l.jobs = nil
			delete(p.lanes, l.id)
			p.lmu.Unlock()
			for range n {
				<-p.slots
			}
			return
		}
		j := l.jobs[0]
		l.jobs = l.jobs[1:]
		p.lmu.Unlock()

		if next, ok := p.process(j); ok {
			// The follow-up takes over j's slot.
			p.lmu.Lock()
			l.insert(next)
			p.lmu.Unlock()
			continue
		}
		<-p.slots
	}
}

// errAbandoned means Close stopped the retries; the job stays pending.
var errAbandoned = errors.New("voterewards: delivery abandoned at close")

// process makes the handler call of j with retries, records the outcome, and
// returns a follow-up job: the expiry of a delivered vote that has already
// expired, which must run before the user's next vote.
func (p *Poller) process(j job) (job, bool) {
	attempts, err := p.attempt(j)
	if errors.Is(err, errAbandoned) {
		return job{}, false
	}
	if err != nil {
		p.log.Error("giving up on vote", slog.String("kind", j.kind.String()), slog.String("key", j.v.Key),
			slog.Int("attempts", attempts), slog.Any("error", err))
		p.giveUp(j.v, &DeliveryError{Kind: j.kind, Key: j.v.Key, Attempts: attempts, Err: err})
	}
	switch j.kind {
	case KindReward:
		expire := err == nil && p.cfg.OnExpire != nil
		if !p.record(j, func(ctx context.Context) error { return p.store.Delivered(ctx, j.v, expire) }) {
			// Still pending in the store: delivered again at the next start,
			// and its expiry scheduled then.
			return job{}, false
		}
		if expire {
			if !j.v.ExpiresAt.After(p.cfg.Now()) {
				return job{kind: KindExpiry, v: j.v, at: j.v.ExpiresAt}, true
			}
			p.scheduleExpiry(j.v)
		}
	case KindExpiry:
		// If this fails, the expiry stays pending and runs again at the next start.
		p.record(j, func(ctx context.Context) error { return p.store.Expired(ctx, j.v) })
	}
	return job{}, false
}

// record writes the outcome of j to the store, retrying a failed write as a
// failed handler is retried (RetryDelay, doubling, MaxAttempts times), and
// reports whether it succeeded. Close stops the retries but not the first
// write: an outcome reached as Close began is still recorded. A write that
// finally fails is logged and passed to OnGiveUp as a *RecordError.
func (p *Poller) record(j job, write func(context.Context) error) bool {
	// Not cancelled with the handlers: a completed delivery is worth recording.
	ctx := context.WithoutCancel(p.hctx)
	for n := 1; ; n++ {
		err := write(ctx)
		if err == nil {
			return true
		}
		if n < p.cfg.MaxAttempts {
			delay := backoff.Exp(n, p.cfg.RetryDelay, maxRetryDelay)
			p.log.Warn("recording the outcome failed; retrying", slog.String("kind", j.kind.String()), slog.String("key", j.v.Key),
				slog.Int("attempt", n), slog.Duration("delay", delay), slog.Any("error", err))
			if backoff.Sleep(p.stopCtx, delay) == nil {
				continue
			}
		}
		rerr := &RecordError{Kind: j.kind, Key: j.v.Key, Attempts: n, Err: err}
		p.log.Error("recording the outcome failed; the vote stays pending until the next start",
			slog.String("kind", j.kind.String()), slog.String("key", j.v.Key), slog.Int("attempts", n), slog.Any("error", err))
		p.giveUp(j.v, rerr)
		return false
	}
}

// attempt calls the handler until it succeeds or MaxAttempts is reached,
// waiting RetryDelay (doubling, with jitter) between calls. It returns
// errAbandoned if Close interrupted it.
func (p *Poller) attempt(j job) (int, error) {
	for n := 1; ; n++ {
		err := p.call(j)
		if err == nil {
			return n, nil
		}
		if p.hctx.Err() != nil {
			// Cancelled by Close: not the handler's fault; try again next run.
			return n, errAbandoned
		}
		if n >= p.cfg.MaxAttempts {
			return n, err
		}
		delay := backoff.Exp(n, p.cfg.RetryDelay, maxRetryDelay)
		p.log.Warn("handler failed; retrying", slog.String("kind", j.kind.String()), slog.String("key", j.v.Key),
			slog.Int("attempt", n), slog.Duration("delay", delay), slog.Any("error", err))
		if backoff.Sleep(p.stopCtx, delay) != nil {
			return n, errAbandoned
		}
	}
}

// call runs one handler call, turning a panic into a *PanicError.
func (p *Poller) call(j job) (err error) {
	h := p.cfg.OnReward
	if j.kind == KindExpiry {
		h = p.cfg.OnExpire
	}
	if r := panics.Try(func() { err = h(p.hctx, j.v) }); r != nil {
		return &PanicError{Value: r.Value, Stack: r.Stack}
	}
	return err
}

// giveUp passes err to OnGiveUp, if set, containing a panic of it.
func (p *Poller) giveUp(v Vote, err error) {
	if p.cfg.OnGiveUp == nil {
		return
	}
	if r := panics.Try(func() { p.cfg.OnGiveUp(v, err) }); r != nil {
		p.log.Error("OnGiveUp panicked", slog.String("key", v.Key), slog.Any("panic", r.Value))
	}
}
