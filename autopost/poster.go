package autopost

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/topgg"
)

// Poster posts a [Source]'s counts to Top.gg, by default those of its own
// [Counter]. Make it with [New]; safe for concurrent use.
type Poster struct {
	panicked atomic.Bool // OnPost panicked once: its stack was logged
	client   *topgg.Client
	cfg      Config
	source   Source
	counter  *Counter // the default Source; nil when Config.Source is set
	log      *slog.Logger

	running atomic.Bool
}

// New returns a Poster that posts with client the counts of cfg.Source, or of
// its own Counter ([Poster.Attach]); it makes no request. Errors:
// [topgg.ErrNilArgument], a *[topgg.ConfigError].
func New(client *topgg.Client, cfg Config) (*Poster, error) {
	if client == nil {
		return nil, fmt.Errorf("autopost: New: %w (*topgg.Client)", topgg.ErrNilArgument)
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
	}
	if p.source == nil {
		p.counter = NewCounter(cfg.ShardCount)
		p.source = p.counter
	}
	return p, nil
}

// Attach attaches sessions to the Poster's own Counter; see
// [Counter.Attach]. It fails when the Poster posts from another Source.
func (p *Poster) Attach(sessions ...*discordgo.Session) (detach func(), err error) {
	if p.counter == nil {
		return nil, errNoCounter
	}
	return p.counter.Attach(sessions...)
}

// Run posts the counts every Interval once complete (never a partial total)
// until ctx is done, then returns nil. Service errors are reported and retried,
// never returned. Errors: [topgg.ErrRunning] beside another Run, [ErrNoSessions]
// when its own Counter has no discord.
func (p *Poster) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return fmt.Errorf("autopost: Poster %w", topgg.ErrRunning)
	}
	defer p.running.Store(false)
	if p.counter != nil && p.counter.t.attached.Load() == 0 {
		return ErrNoSessions
	}
	if !p.waitComplete(ctx) {
		return nil
	}
	var l loop
	for {
		if clock.Sleep(ctx, p.cfg.clock, p.attempt(ctx, &l)) != nil {
			return nil
		}
	}
}

// waitComplete waits until the Source's counts are complete, warning once of
// sessions not opened and of shards missing at ReadyTimeout; false if ctx is
// done first.
func (p *Poster) waitComplete(ctx context.Context) bool {
	timeout := p.cfg.clock.NewTimer(p.cfg.ReadyTimeout)
	defer timeout.Stop()
	var openCheck <-chan time.Time // nil: nothing to check
	if p.counter != nil {
		t := p.cfg.clock.NewTimer(discord.OpenGrace)
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

// waitChange waits for a change of the counts (or a recheck), ctx, or the
// open check or ready timeout, which it reports.
func (p *Poster) waitChange(ctx context.Context, changed <-chan struct{}, timeout clock.Timer, openCheck *<-chan time.Time, c Counts) {
	var poll <-chan time.Time
	if changed == nil {
		t := p.cfg.clock.NewTimer(p.recheck())
		defer t.Stop()
		poll = t.C()
	}
	select {
	case <-ctx.Done():
	case <-changed:
	case <-poll:
	case <-*openCheck:
		*openCheck = nil
		discord.WarnUnopened(ctx, p.log, p.counter.attachedSessions())
	case <-timeout.C():
		p.log.Warn("not every shard has reported yet; the first post waits for them",
			"missing", c.Missing, "shards", c.Shards, "waited", p.cfg.ReadyTimeout)
		p.notify(ctx, Result{At: p.cfg.clock.Now(), Counts: c, Outcome: OutcomeIncomplete})
	}
}

// recheck is how often a Source without a Changed channel is asked again
// while its counts are incomplete, and the first wait after a failure.
func (p *Poster) recheck() time.Duration {
	return max(min(p.cfg.Interval/16, time.Minute), time.Millisecond)
}

// Format prints the Poster as "autopost.Poster" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*Poster) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "autopost.Poster") }
