package voterewards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Run polls the vote history and delivers the votes (polled, ingested, or
// left pending by an earlier run) until ctx is done. It first loads the
// store: an error doing so is returned. When ctx is done it stops polling and
// taking new work, lets the handler calls in progress finish for
// [Config.GracePeriod], then cancels their context, and returns nil once
// every handler call has returned and nothing it started is running; or, if
// a handler ignores its cancelled context, [CancelWait] later without it
// (its goroutine is left behind, at most one per worker, and its outcome is
// dropped: the vote stays pending, so the next Run may call the handler for
// it again while the stuck call still runs). Work not
// done stays pending in the store for the next Run. A second Run while one is
// running returns [topgg.ErrRunning]; Run may be called again after it returned
// (a fleet runs it each time it wins the lease).
func (p *Poller) Run(ctx context.Context) error {
	if p == nil || p.store == nil {
		return errNotMade
	}
	if !p.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer p.running.Store(false)
	p.caughtUp.Store(false)

	r := p.newRun(ctx)
	defer close(r.ended)
	defer r.hcancel()
	p.setActive(r)
	defer p.setActive(nil)

	loopCtx, stopLoops := context.WithCancel(ctx)
	defer stopLoops()
	var loops sync.WaitGroup
	if feed, ok := p.store.(Feed); ok {
		loops.Go(func() { r.follow(loopCtx, feed) })
	}
	snap, err := p.load(ctx)
	if err != nil {
		stopLoops()
		loops.Wait()
		r.pool.Wait()
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("voterewards: loading the vote store: %w", err)
	}
	startup := r.prepare(snap)
	loops.Go(func() { r.fetchLoop(loopCtx, startup) })
	loops.Go(func() { r.expiryLoop(loopCtx) })
	loops.Go(func() { r.intakeLoop(loopCtx) })
	<-ctx.Done()
	stopLoops()
	r.drain(&loops)
	// The votes this run held stay pending in the store, for the next Run.
	p.observe(Event{Type: EventPending, Pending: 0})
	return nil
}

// run is the state of one Run call, shared by its goroutines only.
type run struct {
	p   *Poller
	log *slog.Logger
	// stop is Run's context: once done, no new handler call and no retry.
	stop context.Context
	// hctx is the handlers' context, cancelled when the grace period ends.
	hctx    context.Context
	hcancel context.CancelFunc
	ended   chan struct{} // closed when Run returns
	// late is set when Run returned without the handlers that ignored their
	// cancelled context: what they return is dropped (deliver.go).
	late atomic.Bool

	delivery
	expiries
	in intake

	// Owned by the fetch goroutine.
	cp        Checkpoint
	failures  int
	refused   bool // the last failures were refusals of the token (fetch.go)
	lastPrune time.Time
}

func (p *Poller) newRun(ctx context.Context) *run {
	r := &run{p: p, log: p.log, stop: ctx, ended: make(chan struct{})}
	r.hctx, r.hcancel = context.WithCancel(context.WithoutCancel(ctx))
	r.delivery.init(p.cfg.Concurrency)
	r.expiries.init()
	r.in.init()
	return r
}

// stopping reports whether Run's context is done.
func (r *run) stopping() bool { return r.stop.Err() != nil }

// prepare takes in the loaded state and returns the work a previous run left,
// in event order so that a user's late expiry runs before the reward of the
// vote that followed it.
func (r *run) prepare(snap *Snapshot) []job {
	p := r.p
	now := p.cfg.clock.Now()
	r.cp = snap.Checkpoint
	if r.cp.Since.IsZero() {
		r.cp.Since = now.Add(-p.cfg.Lookback)
		if oldest := oldestStart(now); r.cp.Since.Before(oldest) {
			r.log.Info("lookback cut to the service's one-year limit", slog.Duration("lookback", p.cfg.Lookback))
			r.cp.Since = oldest
		}
	}
	p.since.Store(r.cp.Since.UnixNano())
	startup := r.pendingWork(snap, now, false)
	if len(startup) > 0 {
		r.log.Info("resuming pending work", slog.Int("deliveries", len(snap.Pending)), slog.Int("expiries", len(snap.Expiries)))
	}
	return startup
}

// pendingWork feeds the cache with snap's active votes, schedules its future
// expiries that this run does not hold (a given-up one too if retake), and
// returns the rewards and due expiries, in event order, for admit to claim
// and queue: claiming them here, apart from queueing them, would let another
// path queue a user's later vote first.
func (r *run) pendingWork(snap *Snapshot, now time.Time, retake bool) []job {
	active := make([]Vote, 0, len(snap.Seen))
	for _, v := range snap.Seen {
		if v.ExpiresAt.After(now) {
			active = append(active, v)
		}
	}
	r.p.cache.add(active)
	work := make([]job, 0, len(snap.Pending)+len(snap.Expiries))
	for _, v := range snap.Pending {
		work = append(work, job{kind: KindReward, v: v, at: v.CreatedAt})
	}
	for _, v := range snap.Expiries {
		if r.p.cfg.OnExpire == nil {
			break
		}
		if !v.ExpiresAt.After(now) {
			work = append(work, job{kind: KindExpiry, v: v, at: v.ExpiresAt})
		} else if r.claim(KindExpiry, v, retake) {
			r.scheduleExpiry(v)
		}
	}
	slices.SortStableFunc(work, jobOrder)
	return work
}

// drain waits for the loops and the handlers, cancelling the handlers'
// context once the grace period has passed.
func (r *run) drain(loops *sync.WaitGroup) {
	done := make(chan struct{})
	go func() {
		// The loops are the only callers of pool.Go, so the pool may be
		// waited for once they are gone.
		loops.Wait()
		r.pool.Wait()
		close(done)
	}()
	clk := r.p.cfg.clock
	grace := clk.NewTimer(r.p.cfg.GracePeriod)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C():
	}
	r.log.Warn("handlers still running after the grace period; cancelling them", slog.Duration("grace", r.p.cfg.GracePeriod))
	r.hcancel()
	// A handler that ignores its context would hold Run forever: past
	// CancelWait it is left behind (at most one goroutine per worker, and the
	// one waiting for them), and whatever it returns later is dropped.
	left := clk.NewTimer(CancelWait)
	defer left.Stop()
	select {
	case <-done:
	case <-left.C():
		r.late.Store(true)
		r.log.Error("handlers ignored their cancelled context; Run returns without them, and their outcome is dropped (the votes stay pending)",
			slog.Duration("grace", r.p.cfg.GracePeriod), slog.Duration("cancel_wait", CancelWait))
	}
}

// follow feeds the run with the votes other processes add to a shared store.
// A feed that fails is retried with backoff: the poll and the local Ingest
// calls go on meanwhile.
func (r *run) follow(ctx context.Context, feed Feed) {
	for n := 1; ; n++ {
		err := feed.Follow(ctx, func(v Vote) { r.in.offer([]Vote{r.p.checkFed(ctx, v)}) }, func() { r.in.requestReload(false) })
		if ctx.Err() != nil {
			return
		}
		r.log.Error("store feed failed; following it again", slog.Any("error", err), slog.Int("failures", n))
		if r.sleep(ctx, retryWait(n, r.p.cfg.RetryDelay)) != nil {
			return
		}
	}
}

// intakeLoop queues the votes that Ingest (here, or in another process
// through the feed) added, and reloads the pending work from the store when
// asked (Redeliver, a feed resync, an overflowing intake).
func (r *run) intakeLoop(ctx context.Context) {
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.in.wake:
		}
		votes, reload, redeliver, waiters := r.in.take()
		if reload {
			if err := r.reload(ctx, redeliver); err != nil {
				if ctx.Err() != nil {
					return
				}
				failures++
				r.log.Error("reloading pending work failed; retrying", slog.Any("error", err))
				r.in.retry(waiters, redeliver)
				if r.sleep(ctx, retryWait(failures, r.p.cfg.RetryDelay)) != nil {
					return
				}
				continue
			}
			failures = 0
			for _, w := range waiters {
				close(w)
			}
		}
		for _, v := range votes {
			r.p.cache.add([]Vote{v})
			if !r.admit(ctx, job{kind: KindReward, v: v, at: v.CreatedAt}, false) {
				return
			}
		}
	}
}

// reload queues the pending work of the store that this run is not handling;
// with redeliver (Redeliver asked for it) the work it gave up too, which a
// reload for a feed's resync or a full intake leaves alone.
func (r *run) reload(ctx context.Context, redeliver bool) error {
	snap, err := r.p.load(ctx)
	if err != nil {
		return err
	}
	for _, j := range r.pendingWork(snap, r.p.cfg.clock.Now(), redeliver) {
		if !r.admit(ctx, j, redeliver) {
			return ctx.Err()
		}
	}
	return nil
}

// maxIntake bounds the votes waiting in the intake; past it the intake asks
// for a reload instead (they are pending in the store).
const maxIntake = 4096

// intake hands votes from Ingest calls and the feed to the run without
// blocking them.
type intake struct {
	mu        sync.Mutex
	votes     []Vote
	reload    bool
	redeliver bool // the reload takes the given-up work again (Redeliver)
	waiters   []chan struct{}
	wake      chan struct{}
}

func (in *intake) init() { in.wake = make(chan struct{}, 1) }

func (in *intake) signal() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

func (in *intake) offer(votes []Vote) {
	if len(votes) == 0 {
		return
	}
	in.mu.Lock()
	if len(in.votes)+len(votes) > maxIntake {
		in.votes, in.reload = nil, true
	} else {
		in.votes = append(in.votes, votes...)
	}
	in.mu.Unlock()
	in.signal()
}

// requestReload asks for a reload (one that takes the given-up work again if
// redeliver); the channel is closed once it is done.
func (in *intake) requestReload(redeliver bool) <-chan struct{} {
	w := make(chan struct{})
	in.mu.Lock()
	in.reload = true
	in.redeliver = in.redeliver || redeliver
	in.waiters = append(in.waiters, w)
	in.mu.Unlock()
	in.signal()
	return w
}

// retry asks again for a reload that failed, keeping its waiters.
func (in *intake) retry(waiters []chan struct{}, redeliver bool) {
	in.mu.Lock()
	in.reload = true
	in.redeliver = in.redeliver || redeliver
	in.waiters = append(in.waiters, waiters...)
	in.mu.Unlock()
	in.signal()
}

func (in *intake) take() (votes []Vote, reload, redeliver bool, waiters []chan struct{}) {
	in.mu.Lock()
	defer in.mu.Unlock()
	votes, reload, redeliver, waiters = in.votes, in.reload, in.redeliver, in.waiters
	in.votes, in.reload, in.redeliver, in.waiters = nil, false, false, nil
	return votes, reload, redeliver, waiters
}

// errAbandoned means Run's context ended the retries; the job stays pending.
var errAbandoned = errors.New("voterewards: delivery abandoned at stop")
