package autopost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
)

// loop is the state the posting loop carries between attempts of one Run.
type loop struct {
	posted   bool // something was posted since Run began
	last     Counts
	lastAt   time.Time
	failures int // consecutive failed attempts
	// samples are the numbers the service missed, one per interval;
	// nextSample is when the next one is due.
	samples    []topgg.MetricsSample
	nextSample time.Time
	// incomplete and refused are set while shards are missing or the token
	// is refused, so that each spell is logged once.
	incomplete bool
	refused    bool
}

// same reports whether a post of c would send what the last one did.
func (p *Poster) same(a, b Counts) bool {
	if a.Servers != b.Servers || a.Shards != b.Shards {
		return false
	}
	return p.cfg.Mode != ModeV0 || slices.Equal(a.PerShard, b.PerShard)
}

// attempt makes one post (or skips it), reports it, and returns the wait
// before the next one.
func (p *Poster) attempt(ctx context.Context, l *loop) time.Duration {
	now := p.cfg.clock.Now()
	c, err := p.source.Counts(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return 0 // stopped: not a failure to report
		}
		l.failures++
		res := Result{At: now, Outcome: OutcomeFailed, Err: fmt.Errorf("autopost: reading the counts: %w", err), RetryIn: p.failureWait(l.failures)}
		p.report(ctx, res)
		return res.RetryIn
	}
	res := Result{At: now, Counts: c, Outcome: OutcomePosted}
	if !c.Complete() {
		// l.last stays, so numbers equal to it are not posted again.
		level := slog.LevelDebug
		if !l.incomplete {
			level = slog.LevelWarn
		}
		l.incomplete = true
		p.log.LogAttrs(ctx, level, "not every shard has reported; nothing posted",
			slog.Any("missing", c.Missing), slog.Int("shards", c.Shards))
		res.Outcome = OutcomeIncomplete
		p.notify(ctx, res)
		return p.cfg.Interval
	}
	l.incomplete = false
	if l.posted && len(l.samples) == 0 && p.same(c, l.last) && now.Sub(l.lastAt) < p.cfg.Refresh {
		res.Outcome = OutcomeUnchanged
		p.report(ctx, res)
		return p.cfg.Interval
	}

	err = p.send(ctx, l, c, &res)
	if err != nil && ctx.Err() != nil {
		return 0 // stopped: not a failure to report
	}
	if err == nil {
		l.posted, l.last, l.lastAt, l.failures, l.refused = true, c, now, 0, false
		p.report(ctx, res)
		return p.cfg.Interval
	}
	l.failures++
	res.Outcome, res.Err, res.RetryIn = OutcomeFailed, err, p.failureDelay(l, c, now, err)
	if errors.Is(err, topgg.ErrUnauthorized) {
		if l.refused {
			p.reportQuietly(ctx, res)
			return res.RetryIn
		}
		l.refused = true
	}
	p.report(ctx, res)
	return res.RetryIn
}

// failureDelay keeps a backfill sample when the post may succeed later and
// returns the wait before the next attempt: never less than Retry-After, a
// full Interval after an error no retry mends.
func (p *Poster) failureDelay(l *loop, c Counts, now time.Time, err error) time.Duration {
	if !topgg.Retryable(err) {
		return p.cfg.Interval
	}
	wait := p.failureWait(l.failures)
	if p.cfg.Mode == ModeV1 && p.cfg.MaxBackfill > 0 {
		p.keepSample(l, c, now)
		wait = min(wait, max(l.nextSample.Sub(now), 0))
	}
	var rl *topgg.RateLimitError
	if errors.As(err, &rl) && rl.RetryAfter > 0 {
		wait = rl.RetryAfter
	}
	return wait
}

// send posts c: in v1, the missed samples first (in one batch), then the
// current numbers.
func (p *Poster) send(ctx context.Context, l *loop, c Counts, res *Result) error {
	if err := clock.CheckTerm(ctx); err != nil { // a fleet leader past its term posts nothing
		return err
	}
	if p.cfg.Mode == ModeV0 {
		return p.sendV0(ctx, c)
	}
	if len(l.samples) > 0 {
		slices.SortStableFunc(l.samples, func(a, b topgg.MetricsSample) int { return a.Timestamp.Compare(b.Timestamp) })
		err := p.client.PostMetricsBatch(ctx, l.samples)
		switch {
		case err == nil:
			res.Backfilled = len(l.samples)
			l.samples = nil
		case topgg.Retryable(err), ctx.Err() != nil:
			return err
		default:
			// Refused for itself: sending it again would fail again.
			p.log.LogAttrs(ctx, slog.LevelWarn, "Top.gg refused the missed samples; dropping them",
				slog.Int("samples", len(l.samples)), slog.String("error", err.Error()))
			l.samples = nil
		}
	}
	return p.client.UpdateMetrics(ctx, metrics(c))
}

func metrics(c Counts) topgg.BotMetrics {
	return topgg.BotMetrics{ServerCount: new(c.Servers), ShardCount: new(c.Shards)}
}

// sendV0 posts the legacy stats, with the per-shard list.
func (p *Poster) sendV0(ctx context.Context, c Counts) error {
	if c.BotID == "" {
		return errors.New("autopost: v0: bot id unknown (no READY yet)")
	}
	return p.client.Legacy().PostStats(ctx, c.BotID, topgg.BotStats{
		ServerCount: c.Servers, Shards: c.PerShard, ShardCount: c.Shards,
	})
}

// keepSample records the numbers of a failed post for the backfill, at most
// one per interval and MaxBackfill in all (the oldest dropped).
func (p *Poster) keepSample(l *loop, c Counts, now time.Time) {
	if len(l.samples) > 0 && now.Before(l.nextSample) {
		return
	}
	if len(l.samples) >= p.cfg.MaxBackfill {
		n := copy(l.samples, l.samples[len(l.samples)-p.cfg.MaxBackfill+1:])
		l.samples = l.samples[:n]
	}
	l.samples = append(l.samples, topgg.MetricsSample{Timestamp: now, Metrics: metrics(c)})
	l.nextSample = now.Add(p.cfg.Interval)
}

// failureWait is the jittered backoff after the n-th failure in a row, up to
// the interval.
func (p *Poster) failureWait(n int) time.Duration {
	return clock.Backoff(n, p.recheck(), p.cfg.Interval)
}
