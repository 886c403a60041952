package voterewards

import (
	"context"
	"fmt"
	"log/slog"
)

// Mirror keeps [Poller.Active] current in a process that does not run
// [Poller.Run] (a fleet's followers), until ctx is done; then it returns nil.
// It loads the store's votes into the cache and, if the store is a [Feed],
// follows it: votes that any process ingests are known within moments, and
// after a resync the store is loaded again. With a store that is not a Feed
// it loads once and prunes the cache (the process's own Ingest calls feed it
// anyway). Once the store's checkpoint shows the history read from far
// enough back, a process that only mirrors answers Covered too (the leader
// polls on). It may run beside Run. It returns [topgg.ErrRunning] if another Mirror
// call is running, and the store's error if the first load fails or, as soon
// as it does, the feed fails for good.
func (p *Poller) Mirror(ctx context.Context) error {
	if p == nil || p.store == nil {
		return errNotMade
	}
	if !p.mirroring.CompareAndSwap(false, true) {
		return errRunning
	}
	defer p.mirroring.Store(false)
	if err := p.loadCache(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("voterewards: mirror: %w", err)
	}
	feed, ok := p.store.(Feed)
	if !ok {
		p.pruneCache(ctx, nil)
		return nil
	}
	resync := make(chan struct{}, 1)
	done := make(chan error, 1)
	// The prune loop ends with the feed: a feed that failed for good ends
	// Mirror with its error (a supervisor restarts it), rather than leave a
	// cache that learns nothing more until ctx is done.
	pruneCtx, stopPrune := context.WithCancel(ctx)
	defer stopPrune()
	go func() {
		defer stopPrune()
		done <- feed.Follow(ctx, func(v Vote) { p.cache.add([]Vote{p.checkFed(ctx, v)}) }, func() {
			select {
			case resync <- struct{}{}:
			default:
			}
		})
	}()
	p.pruneCache(pruneCtx, resync)
	if err := <-done; err != nil && ctx.Err() == nil {
		return fmt.Errorf("voterewards: mirror: store feed: %w", err)
	}
	return nil
}

// pruneCache prunes the cache every pruneEvery, and reloads it when resync
// says so, until ctx is done.
func (p *Poller) pruneCache(ctx context.Context, resync <-chan struct{}) {
	clk := p.cfg.clock
	for {
		t := clk.NewTimer(pruneEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
			p.cache.prune(clk.Now())
			if !p.caughtUp.Load() && !p.running.Load() {
				// Not covered yet: the leader may have saved its first
				// checkpoint since the last load.
				if err := p.loadCache(ctx); err != nil && ctx.Err() == nil {
					p.log.Warn("mirror: reloading the store failed", slog.Any("error", err))
				}
			}
		case <-resync:
			t.Stop()
			if err := p.loadCache(ctx); err != nil && ctx.Err() == nil {
				p.log.Error("mirror: reloading the store failed", slog.Any("error", err))
			}
		}
	}
}

// loadCache adds the store's active votes to the cache.
func (p *Poller) loadCache(ctx context.Context) error {
	snap, err := p.load(ctx)
	if err != nil {
		return err
	}
	now := p.cfg.clock.Now()
	active := make([]Vote, 0, len(snap.Seen))
	for _, v := range snap.Seen {
		if v.ExpiresAt.After(now) {
			active = append(active, v)
		}
	}
	p.cache.add(active)
	p.coverFrom(snap.Checkpoint)
	return nil
}

// coverFrom makes Active's answers Covered in a process that does not run Run
// (a fleet's follower) once the store's checkpoint shows that the vote history
// was read from far enough back: the leader that saved it polls the rest. A
// process whose own Run is running decides for itself.
func (p *Poller) coverFrom(cp Checkpoint) {
	if p.running.Load() || cp.Since.IsZero() || cp.LastSeen.IsZero() && cp.Cursor == "" {
		return
	}
	p.since.Store(cp.Since.UnixNano())
	p.caughtUp.Store(true)
}
