package voterewards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/dblkit/go-topgg/internal/typednil"
)

// Poller is the vote pipeline of one process: it reads the vote history
// ([Poller.Run]), takes votes from webhooks ([Poller.Ingest]), keeps them in
// one [Store] where the records of one vote from several sources are one vote,
// and delivers each vote to the handlers of its [Config]. Make it with [New].
// Its methods are safe for concurrent use; a nil or zero Poller returns
// [topgg.ErrNotConfigured].
type Poller struct {
	src   History
	cfg   Config
	log   *slog.Logger
	store Store

	cache    *activeCache
	caughtUp atomic.Bool
	since    atomic.Int64 // Checkpoint.Since, Unix ns; read by Active

	running   atomic.Bool
	mirroring atomic.Bool
	// oddTimes is set once a loaded snapshot had times to clamp (logged once).
	oddTimes atomic.Bool

	mu     sync.Mutex
	active *run // the running Run, for Ingest and Redeliver; nil if none
}

// New returns a Poller that reads votes from src (usually a *topgg.Client) and
// delivers them as cfg says. It makes no request and starts nothing. A nil
// src, or an interface holding a nil pointer (such as a nil *topgg.Client),
// is [topgg.ErrNilArgument]; a missing Store or OnReward, an impossible value,
// or an Interval below [MinInterval] from the real service, is an error naming
// the field.
func New(src History, cfg Config) (*Poller, error) {
	if typednil.Is(src) {
		return nil, errNilHistory
	}
	cfg, err := cfg.withDefaults(src)
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
	p.since.Store(1<<63 - 1)
	return p, nil
}

// Ingest stores votes that arrived by another way than the poll (webhooks)
// and returns once they are durably stored (nil), or why they are not: a
// webhook receiver answers 2xx only on nil. It works whether or not Run is
// running: the votes are pending in the store, [Poller.Active] knows them at
// once, and the running Run (in this process at once; in another process
// through the store's [Feed]) delivers them; without a Run, the next Run
// does. A vote the store already holds (the same vote from another source,
// or a replayed delivery; see [DedupWindow]) is not stored again and is
// rewarded once. Each vote needs an Origin and a PlatformID or UserID; its
// times are sanitized like the poll's (a missing CreatedAt is the receipt
// time, as for v0 webhooks, and ExpiresAt then CreatedAt + [VoteLifetime]).
// A vote that cannot be one fails the whole call with [ErrInvalidVote] and
// nothing is stored. Concurrent calls share store commits.
func (p *Poller) Ingest(ctx context.Context, votes ...Vote) error {
	if p == nil || p.store == nil {
		return errNotMade
	}
	now := p.cfg.clock.Now()
	clean := make([]Vote, len(votes))
	for i, v := range votes {
		s, f, err := sanitize(v, now)
		if err != nil {
			return err
		}
		if f != 0 {
			p.log.Warn("vote corrected", slog.String("key", s.Key()), slog.String("origin", s.Origin.String()), slog.String("fixes", f.String()))
		}
		clean[i] = s
	}
	added, err := p.store.Ingest(ctx, nil, clean)
	if err != nil {
		return fmt.Errorf("voterewards: storing the votes: %w", err)
	}
	p.observeIngest(clean, added)
	p.cache.add(added)
	if r := p.current(); r != nil {
		r.in.offer(added)
	}
	return nil
}

// Redeliver asks the running Run to deliver again every reward (and due
// expiry) the store holds as pending and Run is not handling already: the
// votes whose handler failed every attempt, or whose outcome could not be
// recorded. Within a Run only Redeliver takes those again: the store's feed
// echoing such a vote, or a feed resync, does not. It returns once they are
// queued (not delivered), or
// [ErrNotRunning] if Run is not running (the next Run delivers them), or
// ctx's error.
func (p *Poller) Redeliver(ctx context.Context) error {
	if p == nil || p.store == nil {
		return errNotMade
	}
	r := p.current()
	if r == nil {
		return ErrNotRunning
	}
	done := r.in.requestReload(true)
	select {
	case <-done:
		return nil
	case <-r.ended:
		return ErrNotRunning
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Poller) current() *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active
}

func (p *Poller) setActive(r *run) {
	p.mu.Lock()
	p.active = r
	p.mu.Unlock()
}

// errNilSnapshot is a Store's answer of neither a snapshot nor an error.
var errNilSnapshot = errors.New("voterewards: Store.Load returned no snapshot and no error")

// load loads the store, refusing a nil snapshot.
func (p *Poller) load(ctx context.Context) (*Snapshot, error) {
	snap, err := p.store.Load(ctx)
	if err == nil && snap == nil {
		err = errNilSnapshot
	}
	if err != nil {
		return nil, err
	}
	p.noteOddTimes(ctx, checkSnapshot(snap, p.cfg.clock.Now()))
	return snap, nil
}
