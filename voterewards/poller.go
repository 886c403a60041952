package voterewards

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync/atomic"

	"github.com/dblkit/go-topgg/internal/typednil"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// History is the vote history a [Poller] reads, page by page; *topgg.Client
// satisfies it. A poller never calls Votes concurrently.
type History interface {
	Votes(ctx context.Context, q topgg.VotesQuery) (*topgg.VotePage, error)
}

var _ History = (*topgg.Client)(nil)

// Poller is the vote pipeline of one process: it reads the vote history and
// takes webhook votes into one [Store], and delivers each vote to the
// handlers of its [Config]. Make it with [New]; safe for concurrent use.
type Poller struct {
	panicked atomic.Bool // a hook panicked once: its stack was logged
	src      History
	cfg      Config
	log      *slog.Logger

	cache    *activeCache
	caughtUp atomic.Bool
	since    atomic.Int64 // Checkpoint.Since, Unix ns, for Active; set before caughtUp

	running   atomic.Bool
	mirroring atomic.Bool
	oddTimes  atomic.Bool // a loaded snapshot had times to clamp (logged once)

	active atomic.Pointer[run] // the running Run, for Ingest and Redeliver
}

// New returns a Poller that reads votes from src and delivers them as cfg
// says; it makes no request and starts nothing. Errors: a nil src,
// [topgg.ErrNilArgument]; a Config it cannot run, a *[topgg.ConfigError].
func New(src History, cfg Config) (*Poller, error) {
	if typednil.Is(src) {
		return nil, errNilHistory
	}
	cfg, err := cfg.withDefaults(src)
	if err != nil {
		return nil, err
	}
	return &Poller{
		src:   src,
		cfg:   cfg,
		log:   cfg.Logger.With(slog.String("component", "voterewards")),
		cache: &activeCache{ids: map[string]int64{}},
	}, nil
}

// Ingest stores votes that arrived by another way than the poll (webhooks)
// and returns nil once they are durable; [Poller.Active] knows them at once,
// and a Run here or elsewhere delivers them once. A vote without an Origin or
// a user id fails the whole call with [ErrInvalidVote], storing nothing.
func (p *Poller) Ingest(ctx context.Context, votes ...Vote) error {
	now := p.cfg.clock.Now()
	clean := make([]Vote, len(votes))
	for i, v := range votes {
		var err error
		if clean[i], err = p.sanitize(v, now); err != nil {
			return err
		}
	}
	added, err := p.cfg.Store.Ingest(ctx, nil, clean, p.cfg.StreakGrace)
	if err != nil {
		if r := p.active.Load(); r != nil {
			r.in.ask(false, true) // it may have committed: a retry would find duplicates, a reload queues them
		}
		return fmt.Errorf("voterewards: ingest: %w", err)
	}
	p.observeIngest(clean, added)
	p.cache.add(added)
	if r := p.active.Load(); r != nil {
		r.in.offer(added)
		// Let the intake run now: woken last, it would wait on this P until
		// the caller blocks, after writing a webhook's answer (issue 27).
		runtime.Gosched()
	}
	return nil
}

// IngestWebhook is webhook.Config's OnVote: it stores a delivered vote as
// [Poller.Ingest] does, but a test delivery or an expired vote. [ErrInvalidVote]
// also wraps [webhook.ErrMalformedBody] (a 400); other errors get a 500, retried.
func (p *Poller) IngestWebhook(ctx context.Context, v webhook.Vote) error {
	if v.Test {
		return nil
	}
	vote := Vote{Vote: v.Vote, Origin: OriginWebhook, Hook: &Hook{ID: v.ID, Query: v.Query}}
	if v.Version == 0 {
		vote.Origin = OriginWebhookV0
	}
	// A delivery of a vote already expired is a replay: the dedup set may
	// have pruned its first record, and storing it again would reward it twice.
	if !v.ExpiresAt.IsZero() && !v.ExpiresAt.After(p.cfg.clock.Now()) {
		p.log.Info("webhook vote already expired; not stored (the history has it)",
			slog.String("key", vote.Key()))
		return nil
	}
	err := p.Ingest(ctx, vote)
	if errors.Is(err, ErrInvalidVote) {
		return fmt.Errorf("%w: %w", webhook.ErrMalformedBody, err)
	}
	return err
}

// Redeliver asks the running Run to deliver again what is pending in the
// store and given up on, and returns once it is queued. Errors:
// [ErrNotRunning] if Run is not running, or ctx's.
func (p *Poller) Redeliver(ctx context.Context) error {
	r := p.active.Load()
	if r == nil {
		return ErrNotRunning
	}
	done := make(chan struct{})
	r.in.ask(true, false, done)
	select {
	case <-done:
		return nil
	case <-r.stop.Done(): // Run stops: the reload will not come
		return ErrNotRunning
	case <-ctx.Done():
		return ctx.Err()
	}
}

// load loads the store, refusing a nil snapshot.
func (p *Poller) load(ctx context.Context) (*Snapshot, error) {
	snap, err := p.cfg.Store.Load(ctx)
	if err != nil || snap == nil {
		return nil, cmp.Or(err, errNilSnapshot)
	}
	p.noteOddTimes(ctx, checkSnapshot(snap, p.cfg.clock.Now()))
	return snap, nil
}

// Format prints "voterewards.Poller" under every verb, never its state (racy, may hold secrets).
func (*Poller) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "voterewards.Poller") }
