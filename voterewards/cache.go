package voterewards

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"
)

// activeCache maps user ids of both kinds to the latest ExpiresAt seen (Unix ns).
type activeCache struct {
	mu  sync.RWMutex
	ids map[string]int64
}

func (c *activeCache) add(votes []Vote) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range votes {
		exp := v.ExpiresAt.UnixNano()
		for _, id := range [2]string{v.UserID, v.PlatformID} {
			if id != "" && exp > c.ids[id] {
				c.ids[id] = exp
			}
		}
	}
}

// addActive adds the votes not expired at now.
func (c *activeCache) addActive(votes []Vote, now time.Time) {
	c.add(slices.DeleteFunc(slices.Clone(votes), func(v Vote) bool { return !v.ExpiresAt.After(now) }))
}

// prune drops the ids whose votes have all expired.
func (c *activeCache) prune(now time.Time) {
	n := now.UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.DeleteFunc(c.ids, func(_ string, exp int64) bool { return exp <= n })
}

// Status is what [Poller.Active] knows about a user's vote.
type Status struct {
	// Active is true while the user's latest vote has not expired.
	Active bool
	// Until is when the active vote expires; zero when Active is false.
	Until time.Time
	// Covered is true once the poller has read the last [VoteLifetime] of the
	// history; until then an inactive answer may be wrong.
	Covered bool
}

// Active reports from memory, without a request or an allocation, whether the
// user id (Top.gg or platform id) has an active vote, as seen by the poll,
// [Poller.Ingest] and, from other processes, [Poller.Mirror].
func (p *Poller) Active(id string) Status {
	now := p.cfg.clock.Now()
	p.cache.mu.RLock()
	exp := p.cache.ids[id] // the latest expiry known for id
	p.cache.mu.RUnlock()
	st := Status{Covered: p.caughtUp.Load() && p.since.Load() <= now.Add(-VoteLifetime).UnixNano()}
	if exp > now.UnixNano() {
		st.Active, st.Until = true, time.Unix(0, exp).UTC()
	}
	return st
}

// Mirror keeps [Poller.Active] current in a process that does not run
// [Poller.Run] (a fleet's follower), following the store's [Feed], until ctx is
// done. Errors: [topgg.ErrRunning], the store's first load or feed failure.
func (p *Poller) Mirror(ctx context.Context) error {
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
	resync := make(chan struct{}, 1)
	// A feed that failed for good ends Mirror, for a supervisor to restart.
	g := pool.New().WithContext(ctx).WithCancelOnError()
	if feed, ok := p.cfg.Store.(Feed); ok {
		g.Go(func(ctx context.Context) error {
			return feed.Follow(ctx, func(v Vote) { p.cache.add([]Vote{p.checkFed(ctx, v, false)}) }, func() { poke(resync) })
		})
	}
	g.Go(func(ctx context.Context) error { p.pruneCache(ctx, resync); return nil })
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("voterewards: mirror: store feed: %w", err)
	}
	return nil
}

// pruneCache prunes the cache every pruneEvery and reloads it on resync, until
// ctx is done; until the store shows the history read it reloads from 1 s on,
// doubling, so that a follower started beside its leader is Covered in seconds.
func (p *Poller) pruneCache(ctx context.Context, resync <-chan struct{}) {
	clk := p.cfg.clock
	wait := time.Second
	for {
		d := pruneEvery
		if p.uncovered() {
			d, wait = wait, min(2*wait, pruneEvery)
		}
		t := clk.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
			p.cache.prune(clk.Now())
			if p.uncovered() { // a first checkpoint since?
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

// uncovered reports whether, beside no Run, the history is not yet seen read.
func (p *Poller) uncovered() bool { return !p.caughtUp.Load() && !p.running.Load() }

// loadCache adds the store's active votes to the cache.
func (p *Poller) loadCache(ctx context.Context) error {
	snap, err := p.load(ctx)
	if err != nil {
		return err
	}
	p.cache.addActive(snap.Seen, p.cfg.clock.Now())
	// Beside no Run, Active answers Covered once the checkpoint shows the
	// history read from far enough back.
	if cp := snap.Checkpoint; !p.running.Load() && !cp.Since.IsZero() && (!cp.LastSeen.IsZero() || cp.Cursor != "") {
		p.since.Store(cp.Since.UnixNano())
		p.caughtUp.Store(true)
	}
	return nil
}
