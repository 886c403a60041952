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

// Poller polls the vote history and delivers each vote to the handlers of its
// [Config]. Make it with [New], start it with [Poller.Start] (or [Poller.Run]) and
// stop it with [Poller.Close]. A Poller runs once: it cannot be started again
// after Close. Its methods are safe for concurrent use.
type Poller struct {
	src   Source
	cfg   Config
	log   *slog.Logger
	store Store

	cache    *activeCache
	caughtUp atomic.Bool
	since    atomic.Int64 // Checkpoint.Since, Unix ns; read by Active

	mu      sync.Mutex
	started bool
	closed  bool

	loops      sync.WaitGroup
	loopCancel context.CancelFunc
	// stopCtx is cancelled by Close: no new handler call, no more retries.
	stopCtx   context.Context
	stop      context.CancelFunc
	hctx      context.Context
	hcancel   context.CancelFunc
	closeOnce sync.Once
	closeErr  error

	delivery
	expiries

	// Owned by the fetch goroutine.
	cp        Checkpoint
	failures  int
	lastPrune time.Time
}

// New returns a Poller that reads votes from src (usually a *topgg.Client) and
// delivers them as cfg says. It makes no request and starts nothing.
func New(src Source, cfg Config) (*Poller, error) {
	if src == nil {
		return nil, errors.New("voterewards: nil Source")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Poller{
		src:   src,
		cfg:   cfg,
		log:   cfg.Logger.With(slog.String("component", "voterewards")),
		store: cfg.Store,
		cache: newActiveCache(),
	}
	p.stopCtx, p.stop = context.WithCancel(context.Background())
	p.since.Store(1<<63 - 1)
	p.delivery.init(cfg.Concurrency)
	p.expiries.init()
	return p, nil
}

// Start loads the store, queues the deliveries and expiries a previous run left
// pending, and starts polling in the background. Polling stops when ctx is done
// or Close is called; Close must be called in any case to wait for the handlers.
// The handlers' context carries ctx's values but is cancelled only by Close.
// Start returns an error if the store cannot be loaded or the Poller was
// started or closed before. A Close that runs concurrently waits for Start to
// return, then stops what it started.
func (p *Poller) Start(ctx context.Context) error {
	// The loops start under p.mu: a Close that saw started set must find them
	// in p.loops, or it would wait for none and then shut the worker pool
	// under their feet.
	p.mu.Lock()
	defer p.mu.Unlock()
	loopCtx, startup, err := p.prepare(ctx)
	if err != nil {
		return err
	}
	p.loops.Go(func() { p.fetchLoop(loopCtx, startup) })
	p.loops.Go(func() { p.expiryLoop(loopCtx) })
	return nil
}

// prepare loads the store and sets up everything Start needs but the loops; it
// returns the loops' context and the work left by the previous run, in event
// order so that a user's late expiry runs before the reward of the vote that
// followed it. The caller holds p.mu.
func (p *Poller) prepare(ctx context.Context) (context.Context, []job, error) {
	if p.started || p.closed {
		return nil, nil, errors.New("voterewards: Poller already started or closed")
	}
	snap, err := p.store.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	now := p.cfg.Now()
	p.cp = snap.Checkpoint
	if p.cp.Since.IsZero() {
		p.cp.Since = now.Add(-p.cfg.Lookback)
		if oldest := oldestStart(now); p.cp.Since.Before(oldest) {
			p.log.Info("lookback cut to the service's one-year limit", slog.Duration("lookback", p.cfg.Lookback))
			p.cp.Since = oldest
		}
	}
	p.since.Store(p.cp.Since.UnixNano())
	active := snap.Seen[:0]
	for _, v := range snap.Seen {
		if v.ExpiresAt.After(now) {
			active = append(active, v)
		}
	}
	p.cache.add(active)

	var startup []job
	for _, v := range snap.Pending {
		startup = append(startup, job{kind: KindReward, v: v, at: v.CreatedAt})
	}
	for _, v := range snap.Expiries {
		if v.ExpiresAt.After(now) {
			p.expiries.push(v)
			continue
		}
		startup = append(startup, job{kind: KindExpiry, v: v, at: v.ExpiresAt})
	}
	slices.SortStableFunc(startup, jobOrder)
	if len(startup) > 0 {
		p.log.Info("resuming pending work", slog.Int("deliveries", len(snap.Pending)), slog.Int("expiries", len(snap.Expiries)))
	}

	loopCtx, cancel := context.WithCancel(ctx)
	p.loopCancel = cancel
	p.hctx, p.hcancel = context.WithCancel(context.WithoutCancel(ctx))
	p.started = true
	return loopCtx, startup, nil
}

// Run starts the poller and blocks until ctx is done, then closes it: it waits
// up to CloseTimeout for running handlers. It returns Start's error if the
// poller could not start, and Close's if handlers had to be cancelled. After a
// clean stop it returns nil, not ctx.Err(): cancelling ctx is how the caller
// asks Run to end, so ending is not a failure (a supervisor may take a nil
// return after ctx is done as a clean stop).
func (p *Poller) Run(ctx context.Context) error {
	if err := p.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return p.Close()
}

// Close stops polling, lets the handlers that are running finish (up to
// CloseTimeout, then cancels their context and waits for them to return), and
// returns once no goroutine of the Poller is left. Votes not yet handled stay
// pending in the store for the next run. It does not close the store. Calling
// Close again returns the first result. It may run concurrently with Start:
// it then waits for Start to return and stops what it started, or, if it
// comes first, makes Start fail.
func (p *Poller) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		started := p.started
		p.closed = true
		p.mu.Unlock()
		p.stop()
		if !started {
			return
		}
		p.loopCancel()
		done := make(chan struct{})
		go func() {
			// The loops are the only callers of pool.Go, so the pool may be
			// waited for once they are gone.
			p.loops.Wait()
			p.pool.Wait()
			close(done)
		}()
		t := time.NewTimer(p.cfg.CloseTimeout)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			p.log.Warn("handlers still running at close timeout; cancelling them", slog.Duration("timeout", p.cfg.CloseTimeout))
			p.hcancel()
			<-done
			p.closeErr = fmt.Errorf("voterewards: close: handlers were still running after %s and were cancelled: %w",
				p.cfg.CloseTimeout, context.DeadlineExceeded)
		}
		p.hcancel()
	})
	return p.closeErr
}

// stopping reports whether Close has begun.
func (p *Poller) stopping() bool { return p.stopCtx.Err() != nil }
