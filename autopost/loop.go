package autopost

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/internal/backoff"
	"github.com/dblkit/go-topgg/topgg"
)

// Run posts the counts until ctx is done, then returns nil. The first post
// goes out once every attached shard has its READY (or, after ReadyTimeout,
// once at least one has), then one every Interval. A service error never ends
// Run: it is reported and the post retried. While no attached shard is ready
// (every session detached, say) nothing is posted and the attempts are
// reported as skipped. Run returns ErrRunning if the Poster already runs and
// ErrNoSessions if no session is attached when it starts.
func (p *Poster) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer p.running.Store(false)
	return p.run(ctx)
}

// Start runs the Poster in a goroutine until [Poster.Stop] or ctx is done.
// It returns ErrRunning if the Poster already runs and ErrNoSessions if no
// session is attached.
func (p *Poster) Start(ctx context.Context) error {
	p.life.Lock()
	defer p.life.Unlock()
	if p.t.attached.Load() == 0 {
		return ErrNoSessions
	}
	if !p.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	p.cancel, p.done = cancel, done
	go func() {
		defer close(done)
		defer p.running.Store(false)
		_ = p.run(ctx)
	}()
	return nil
}

// Stop ends a Poster started with Start and waits until its goroutine has
// returned. A post in flight is cancelled. Stop does nothing if the Poster was
// not started; it may be called more than once.
func (p *Poster) Stop() {
	p.life.Lock()
	cancel, done := p.cancel, p.done
	p.cancel, p.done = nil, nil
	p.life.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// loop is the state the posting loop carries from one attempt to the next.
type loop struct {
	posted   bool // something was posted since Run began
	last     snapshot
	lastAt   time.Time
	failures int // consecutive failed attempts
	// samples are the numbers the service missed while it was unreachable,
	// one per interval, oldest first; nextSample is when the next one is due.
	samples    []topgg.MetricsSample
	nextSample time.Time
	// noShard is set while no attached shard is ready, so that the warning
	// is logged once per such spell.
	noShard bool
	// partial is the attached count last warned about as a partial v1
	// total; 0 while every shard is attached.
	partial int
}

func (p *Poster) run(ctx context.Context) error {
	if p.t.attached.Load() == 0 {
		return ErrNoSessions
	}
	if p.cfg.Interval < MinRecommendedInterval {
		p.log.Warn("post interval is below 15 minutes; Top.gg limits how often a bot may post",
			"interval", p.cfg.Interval)
	}
	if !p.waitReady(ctx) {
		return nil
	}
	var l loop
	for {
		if backoff.Sleep(ctx, p.attempt(ctx, &l)) != nil {
			return nil
		}
	}
}

// waitReady waits until every attached shard has its READY, or ReadyTimeout
// has passed and at least one has. It returns false if ctx is done first.
func (p *Poster) waitReady(ctx context.Context) bool {
	timeout := time.NewTimer(p.cfg.ReadyTimeout)
	defer timeout.Stop()
	timedOut := false
	for {
		ready, attached := p.t.ready.Load(), p.t.attached.Load()
		if attached > 0 && (ready >= attached || (timedOut && ready > 0)) {
			if ready < attached {
				p.log.Warn("not every shard is ready; posting the counts of those that are",
					"ready", ready, "attached", attached, "waited", p.cfg.ReadyTimeout)
			}
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-p.t.readyCh:
		case <-timeout.C:
			timedOut = true
			if ready == 0 {
				p.log.Warn("no shard is ready yet; the first post waits for one", "waited", p.cfg.ReadyTimeout)
			}
		}
	}
}

// attempt makes one post (or skips it), reports it, and returns the wait
// before the next one.
func (p *Poster) attempt(ctx context.Context, l *loop) time.Duration {
	now := time.Now()
	var snap snapshot
	if p.cfg.Mode == ModeV0 {
		snap = p.snapshotV0()
	} else {
		snap = p.snapshotV1()
	}
	res := Result{At: now, Servers: snap.servers, Shards: snap.shards}
	// No ready shard also covers no attached one: only attached shards count
	// as ready. Read after the snapshot: detach takes a shard out of the
	// ready count before its guilds leave the totals, so a snapshot that
	// misses a detached shard's guilds is seen here as one without that shard.
	if p.t.ready.Load() == 0 {
		// Nothing is counted: a server_count of 0 would wipe the listing's.
		// l.last stays, so numbers equal to it are not posted again.
		level := slog.LevelDebug
		if !l.noShard {
			level = slog.LevelWarn
		}
		l.noShard = true
		p.log.LogAttrs(ctx, level, "no attached shard is ready; nothing posted",
			slog.Int("attached", int(p.t.attached.Load())))
		res.Skipped = true
		p.notify(ctx, res)
		return p.cfg.Interval
	}
	l.noShard = false
	p.warnPartial(l)
	if l.posted && len(l.samples) == 0 && snap.same(l.last) && now.Sub(l.lastAt) < p.cfg.Refresh {
		res.Skipped = true
		p.report(ctx, res)
		return p.cfg.Interval
	}

	err := p.send(ctx, l, snap, &res)
	if err != nil && ctx.Err() != nil {
		return 0 // stopped: not a failure to report
	}
	if err == nil {
		l.posted, l.last, l.lastAt, l.failures = true, snap, now, 0
		p.report(ctx, res)
		return p.cfg.Interval
	}

	l.failures++
	wait := p.failureWait(l.failures)
	var rl *topgg.RateLimitError
	switch {
	case errors.As(err, &rl):
		if rl.RetryAfter > 0 {
			wait = rl.RetryAfter
		}
	case unreachable(err) && p.cfg.Mode == ModeV1 && p.cfg.MaxBackfill > 0:
		p.keepSample(l, snap, now)
		wait = min(wait, max(time.Until(l.nextSample), 0))
	}
	res.Err, res.RetryIn = err, wait
	p.report(ctx, res)
	return wait
}

// send posts snap: in v1, the missed samples first (in one batch), then the
// current numbers.
func (p *Poster) send(ctx context.Context, l *loop, snap snapshot, res *Result) error {
	if p.cfg.Mode == ModeV0 {
		return p.sendV0(ctx, snap)
	}
	if len(l.samples) > 0 {
		slices.SortStableFunc(l.samples, func(a, b topgg.MetricsSample) int { return a.Timestamp.Compare(b.Timestamp) })
		err := p.client.PostMetricsBatch(ctx, l.samples)
		var rl *topgg.RateLimitError
		switch {
		case err == nil:
			res.Backfilled = len(l.samples)
			l.samples = nil
		case errors.As(err, &rl), unreachable(err), ctx.Err() != nil:
			return err
		default:
			// The service refused the batch itself: sending it again would
			// fail again, so the samples are given up.
			p.log.LogAttrs(ctx, slog.LevelWarn, "Top.gg refused the missed samples; dropping them",
				slog.Int("samples", len(l.samples)), slog.String("error", err.Error()))
			l.samples = nil
		}
	}
	return p.client.UpdateMetrics(ctx, metrics(snap))
}

func metrics(snap snapshot) topgg.BotMetrics {
	return topgg.BotMetrics{ServerCount: topgg.Ptr(snap.servers), ShardCount: topgg.Ptr(snap.shards)}
}

// sendV0 posts the legacy stats: with the per-shard list when every shard is
// here, else one post per local shard with its shard_id.
func (p *Poster) sendV0(ctx context.Context, snap snapshot) error {
	if snap.botID == "" {
		return errors.New("autopost: v0: bot id unknown (no READY yet)")
	}
	legacy := p.client.Legacy()
	if snap.local {
		return legacy.PostStats(ctx, snap.botID, topgg.StatsUpdate{
			ServerCount: snap.servers, Shards: snap.perShard, ShardCount: snap.shards,
		})
	}
	for _, id := range snap.ids {
		err := legacy.PostStats(ctx, snap.botID, topgg.StatsUpdate{
			ServerCount: snap.perShard[id], ShardID: topgg.Ptr(id), ShardCount: snap.shards,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// unreachable reports whether err means the service could not be reached or
// could not answer (after the client's own retries): the case for backfill.
func unreachable(err error) bool {
	var re *topgg.RequestError
	if errors.As(err, &re) {
		return true
	}
	var rl *topgg.RateLimitError
	if errors.As(err, &rl) {
		return false
	}
	var ae *topgg.APIError
	return errors.As(err, &ae) && ae.StatusCode >= 500
}

// keepSample records the numbers of a failed post for the backfill, at most
// one per interval and MaxBackfill in all (the oldest dropped).
func (p *Poster) keepSample(l *loop, snap snapshot, now time.Time) {
	if len(l.samples) > 0 && now.Before(l.nextSample) {
		return
	}
	if len(l.samples) >= p.cfg.MaxBackfill {
		n := copy(l.samples, l.samples[len(l.samples)-p.cfg.MaxBackfill+1:])
		l.samples = l.samples[:n]
	}
	l.samples = append(l.samples, topgg.MetricsSample{Timestamp: now, Metrics: metrics(snap)})
	l.nextSample = now.Add(p.cfg.Interval)
}

// failureWait is the wait after the n-th failure in a row: from a sixteenth of
// the interval (at most a minute), doubling up to the interval, less up to
// half of it at random so that many bots do not retry in step.
func (p *Poster) failureWait(n int) time.Duration {
	first := max(min(p.cfg.Interval/16, time.Minute), time.Millisecond)
	return backoff.Exp(n, first, p.cfg.Interval)
}

// warnPartial warns, once per change of the attached count, when v1 posts
// the total of only some of the bot's shards: the server_count of the
// listing then covers those shards only.
func (p *Poster) warnPartial(l *loop) {
	attached, total := int(p.t.attached.Load()), p.shardTotal()
	if p.cfg.Mode != ModeV1 || attached >= total {
		l.partial = 0
		return
	}
	if attached != l.partial {
		l.partial = attached
		p.log.Warn("only some of the bot's shards are attached here; the v1 server_count covers them only",
			"attached", attached, "shards", total)
	}
}
