package voterewards

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc/pool"
)

// Run polls the vote history and delivers the votes until ctx is done, then
// gives handler calls [Config.GracePeriod], cancels them and returns nil (within
// a second). A store that fails to load is an error; so is a second Run.
func (p *Poller) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer p.running.Store(false)
	p.caughtUp.Store(false)

	r := p.newRun(ctx)
	defer r.hcancel()
	p.active.Store(r)
	defer p.active.Store(nil)

	snap, err := p.load(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("voterewards: loading the vote store: %w", err)
	}
	startup := r.prepare(snap)
	var loops sync.WaitGroup
	if feed, ok := p.cfg.Store.(Feed); ok { // its first resync reloads what came since the load
		loops.Go(func() { r.follow(ctx, feed) })
	}
	loops.Go(func() { r.fetchLoop(ctx, startup) })
	loops.Go(func() { r.expiryLoop(ctx) })
	loops.Go(func() { r.intakeLoop(ctx) })
	<-ctx.Done()
	r.drain(&loops)
	// The votes this run held stay pending in the store, for the next Run.
	p.observe(Event{Type: EventPending, Pending: 0})
	return nil
}

// run is the state of one Run call.
type run struct {
	p         *Poller
	log       *slog.Logger
	stop      context.Context // Run's: once done, no new handler call and no retry
	hctx      context.Context // the handlers': cancelled when the grace period ends
	hcancel   context.CancelFunc
	late      atomic.Bool  // Run returned without handlers that ignored their context: their outcome is dropped
	storeDown atomic.Bool  // set by a failed store write, cleared by a load: meanwhile no handler call starts
	downs     atomic.Int32 // outages since the last write that succeeded, for the hold's wait

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
	r := &run{p: p, log: p.log, stop: ctx}
	r.hctx, r.hcancel = context.WithCancel(context.WithoutCancel(ctx))
	r.pool = pool.New().WithMaxGoroutines(p.cfg.Concurrency)
	r.slots = make(chan struct{}, p.cfg.Concurrency*queuedPerWorker)
	r.lanes, r.known = map[string]*lane{}, map[jobKey]claimed{}
	r.nudge, r.in.wake, r.in.max = make(chan struct{}, 1), make(chan struct{}, 1), maxIntake
	return r
}

// prepare takes in the loaded state and returns the work a previous run left.
// A Lookback past the service's one year is cut by the first query.
func (r *run) prepare(snap *Snapshot) []job {
	now := r.p.cfg.clock.Now()
	r.cp = snap.Checkpoint
	if r.cp.Since.IsZero() {
		r.cp.Since = now.Add(-r.p.cfg.Lookback)
	}
	r.p.since.Store(r.cp.Since.UnixNano())
	startup := r.pendingWork(snap, now, false)
	if len(startup) > 0 {
		r.log.Info("resuming pending work", slog.Int("deliveries", len(snap.Pending)), slog.Int("expiries", len(snap.Expiries)))
	}
	return startup
}

// pendingWork caches snap's active votes, schedules its future expiries this run
// does not hold, and returns its rewards and due expiries in event order.
func (r *run) pendingWork(snap *Snapshot, now time.Time, retake bool) []job {
	r.p.cache.addActive(snap.Seen, now)
	work := make([]job, 0, len(snap.Pending)+len(snap.Expiries))
	for _, v := range snap.Pending {
		work = append(work, job{v: v, at: v.CreatedAt})
	}
	for _, v := range snap.Expiries {
		if r.p.cfg.OnExpire == nil {
			break
		}
		if !v.ExpiresAt.After(now) {
			work = append(work, job{v: v, expiry: true, at: v.ExpiresAt})
		} else if r.claim(true, v, retake) {
			r.scheduleExpiry(v)
		}
	}
	slices.SortStableFunc(work, jobOrder)
	return work
}

// drain waits for the loops and handlers, cancelling the handlers after the grace.
func (r *run) drain(loops *sync.WaitGroup) {
	done, finished := context.WithCancel(context.Background()) // done once all returned
	go func() {
		loops.Wait() // the only callers of pool.Go
		r.pool.Wait()
		finished()
	}()
	if r.sleep(done, r.p.cfg.GracePeriod) != nil {
		return
	}
	r.log.Warn("handlers still running after the grace period; cancelling them", slog.Duration("grace", r.p.cfg.GracePeriod))
	r.hcancel()
	// Past cancelWait a handler that ignores its context is left behind.
	if r.sleep(done, cancelWait) == nil {
		r.late.Store(true)
		r.log.Error("handlers ignored their cancelled context; Run returns without them, and their outcome is dropped (the votes stay pending)",
			slog.Duration("grace", r.p.cfg.GracePeriod), slog.Duration("cancel_wait", cancelWait))
	}
}

// follow feeds the run with the votes other processes add, with backoff.
func (r *run) follow(ctx context.Context, feed Feed) {
	for n := 1; ; n++ {
		err := feed.Follow(ctx, func(v Vote) { r.in.offer([]Vote{r.p.checkFed(ctx, v, true)}) }, func() { r.in.ask(false, false) })
		if ctx.Err() != nil {
			return
		}
		r.log.Error("store feed failed; following it again", slog.Any("error", err), slog.Int("failures", n))
		if r.sleep(ctx, retryWait(n, r.p.cfg.RetryDelay)) != nil {
			return
		}
	}
}

// intakeLoop queues the votes Ingest added (here, or elsewhere: the feed) and reloads when asked.
func (r *run) intakeLoop(ctx context.Context) {
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.in.wake:
		}
		votes, reload, redeliver, held, waiters := r.in.take()
		// The hold's wait doubles with each outage since the last write that succeeded.
		if held && r.sleep(ctx, retryWait(int(max(r.downs.Load(), 1)), r.p.cfg.RetryDelay)) != nil {
			return
		}
		if reload {
			if err := r.reload(ctx, redeliver); err != nil {
				if ctx.Err() != nil {
					return
				}
				failures++
				r.log.Error("reloading pending work failed; retrying", slog.Any("error", err))
				r.in.ask(redeliver, false, waiters...)
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
			if !r.admit(ctx, job{v: v, at: v.CreatedAt}, true, false) {
				return
			}
		}
	}
}

// reload queues the store's pending work this run is not handling (with redeliver, given up too).
func (r *run) reload(ctx context.Context, redeliver bool) error {
	snap, err := r.p.load(ctx)
	if err != nil {
		return err
	}
	r.storeAnswered(false)
	for _, j := range r.pendingWork(snap, r.p.cfg.clock.Now(), redeliver) {
		if !r.admit(ctx, j, true, redeliver) {
			return ctx.Err()
		}
	}
	return nil
}

// poke sends on ch, a channel of one slot, unless a send is waiting already.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// maxIntake bounds the votes waiting in the intake; past it the run reloads.
const maxIntake = 4096

// intake hands votes to a run (or a memory store's follower) without blocking:
// past max votes waiting, it drops them and asks for a reload.
type intake struct {
	mu        sync.Mutex
	max       int
	votes     []Vote
	reload    bool
	redeliver bool // the reload takes the given-up work again (Redeliver)
	held      bool // the reload waits first: it takes again what the store held
	waiters   []chan struct{}
	wake      chan struct{}
}

func (in *intake) offer(votes []Vote) {
	if len(votes) == 0 {
		return
	}
	in.mu.Lock()
	if len(in.votes)+len(votes) > in.max {
		in.votes, in.reload = nil, true
	} else {
		in.votes = append(in.votes, votes...)
	}
	in.mu.Unlock()
	poke(in.wake)
}

// ask asks for a reload (given-up work too if redeliver; after the hold's
// wait if held, for the jobs the store held), closing waiters once done.
func (in *intake) ask(redeliver, held bool, waiters ...chan struct{}) {
	in.mu.Lock()
	in.reload = true
	in.redeliver = in.redeliver || redeliver
	in.held = in.held || held
	in.waiters = append(in.waiters, waiters...)
	in.mu.Unlock()
	poke(in.wake)
}

func (in *intake) take() (votes []Vote, reload, redeliver, held bool, waiters []chan struct{}) {
	in.mu.Lock()
	defer in.mu.Unlock()
	votes, reload, redeliver, held, waiters = in.votes, in.reload, in.redeliver, in.held, in.waiters
	in.votes, in.reload, in.redeliver, in.held, in.waiters = nil, false, false, false, nil
	return votes, reload, redeliver, held, waiters
}
