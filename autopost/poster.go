package autopost

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/session"
	"github.com/dblkit/go-topgg/topgg"
)

// Poster posts a bot's counts to Top.gg: the numbers of a [Source], by
// default its own [Counter] of the sessions given to [Poster.Attach]. Make
// it with [New] and run it with [Poster.Run].
//
// All methods are safe for concurrent use.
type Poster struct {
	client  *topgg.Client
	cfg     Config
	source  Source
	counter *Counter // the default Source; nil when Config.Source is set
	log     *slog.Logger
	clock   clock.Clock

	running atomic.Bool
}

// New returns a Poster that posts with client the numbers of cfg.Source, or,
// when it is nil, of a new Counter (of cfg.ShardCount shards) that
// [Poster.Attach] feeds. It makes no request. It fails with [topgg.ErrNilArgument]
// for a nil client and with a *[ConfigError] for an invalid Config (a
// negative duration or ShardCount, an Interval below [MinInterval] for a
// client of the real service, an unknown mode, MaxBackfill over 100, a nil
// pointer as Source, or ShardCount set beside a Source).
func New(client *topgg.Client, cfg Config) (*Poster, error) {
	if client == nil {
		return nil, errNilClient
	}
	cfg, err := cfg.withDefaults(client.Loopback())
	if err != nil {
		return nil, err
	}
	p := &Poster{
		client: client,
		cfg:    cfg,
		source: cfg.Source,
		log:    cfg.Logger.With("component", "autopost"),
		clock:  cfg.clock,
	}
	if p.source == nil {
		p.counter = NewCounter(cfg.ShardCount)
		p.source = p.counter
	}
	return p, nil
}

// Attach attaches sessions to the Poster's own Counter; see
// [Counter.Attach]. It fails with [ErrNoCounter] when the Poster posts from
// another Source.
func (p *Poster) Attach(sessions ...*discordgo.Session) (detach func(), err error) {
	if p == nil || p.client == nil {
		return nil, errNotMade
	}
	if p.counter == nil {
		return nil, ErrNoCounter
	}
	return p.counter.Attach(sessions...)
}

// Run posts the counts until ctx is done, then returns nil; nothing it
// started outlives it. The first post goes out once the Source's counts are
// complete (every shard has its READY), then one every Interval; while they
// are not, nothing is posted (after ReadyTimeout, or later while shards are
// missing, each attempt is reported as skipped, naming the missing shards).
// A service error never ends Run: it is reported and the post retried,
// after the service's Retry-After when it gave one.
//
// Run may be called again after it returned (a fleet runs its leader's
// Poster each time it wins the lease). It returns [topgg.ErrRunning] while another
// Run of the same Poster runs, [topgg.ErrNotConfigured] on a zero Poster, and
// [ErrNoSessions] when the Poster's own Counter has no session attached.
func (p *Poster) Run(ctx context.Context) error {
	if p == nil || p.client == nil {
		return errNotMade
	}
	if !p.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer p.running.Store(false)
	if p.counter != nil && p.counter.attached() == 0 {
		return ErrNoSessions
	}
	if !p.waitComplete(ctx) {
		return nil
	}
	var l loop
	for {
		if clock.Sleep(ctx, p.clock, p.attempt(ctx, &l)) != nil {
			return nil
		}
	}
}

// waitComplete waits until the Source's counts are complete. After
// session.OpenGrace it warns, once, naming the shards of the Poster's own
// Counter whose sessions are not opened; after ReadyTimeout it reports a
// skipped attempt naming the missing shards, once, and waits on. It returns
// false if ctx is done first.
func (p *Poster) waitComplete(ctx context.Context) bool {
	timeout := p.clock.NewTimer(p.cfg.ReadyTimeout)
	defer timeout.Stop()
	var openCheck <-chan time.Time // nil: nothing to check
	if p.counter != nil {
		t := p.clock.NewTimer(session.OpenGrace)
		defer t.Stop()
		openCheck = t.C()
	}
	failed := false
	for {
		changed := p.source.Changed() // before Counts: a change after it still wakes
		c, err := p.source.Counts(ctx)
		switch {
		case ctx.Err() != nil:
			return false
		case err == nil && c.Complete():
			return true
		case err != nil:
			level := slog.LevelWarn
			if failed {
				level = slog.LevelDebug
			}
			failed = true
			p.log.LogAttrs(ctx, level, "cannot read the counts to post; will ask again", slog.String("error", err.Error()))
			changed = nil // ask again on the clock
		}
		p.waitChange(ctx, changed, timeout, &openCheck, c)
	}
}

// waitChange waits until the Source says its counts changed (or, without a
// channel, a recheck period has passed), ctx is done, or the open check or
// the ready timeout fires, which it reports.
func (p *Poster) waitChange(ctx context.Context, changed <-chan struct{}, timeout clock.Timer, openCheck *<-chan time.Time, c Counts) {
	var poll <-chan time.Time
	if changed == nil {
		t := p.clock.NewTimer(p.recheck())
		defer t.Stop()
		poll = t.C()
	}
	select {
	case <-ctx.Done():
	case <-changed:
	case <-poll:
	case <-*openCheck:
		*openCheck = nil
		session.WarnUnopened(ctx, p.log, p.counter.attachedSessions())
	case <-timeout.C():
		p.log.Warn("not every shard has reported yet; the first post waits for them",
			"missing", c.Missing, "shards", c.Shards, "waited", p.cfg.ReadyTimeout)
		p.notify(ctx, Result{At: p.clock.Now(), Servers: c.Servers, Shards: c.Shards, Skipped: true, Missing: c.Missing})
	}
}

// recheck is how often a Source without a Changed channel is asked again
// while its counts are incomplete.
func (p *Poster) recheck() time.Duration {
	return max(min(p.cfg.Interval/16, time.Minute), time.Millisecond)
}
