package autopost

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/sourcegraph/conc/panics"
)

// Result is the outcome of one post attempt, given to [Config.OnPost].
type Result struct {
	// At is when the attempt started.
	At time.Time
	// Counts are the numbers the attempt posted (or would have); Missing
	// says which shards had not reported.
	Counts
	// Outcome says what the attempt did.
	Outcome Outcome
	// Backfilled is how many missed samples were sent before the numbers.
	Backfilled int
	// Err is why the attempt failed (a *topgg.APIError, an error of the
	// Source, ...); nil when posted or skipped.
	Err error
	// RetryIn is, after a failure, the wait before the next attempt.
	RetryIn time.Duration
}

// Outcome says what one post attempt did, fit for a metrics label; its zero
// value is no outcome. Each package's Outcome is one metric's label set.
type Outcome uint8

// Outcomes of a post attempt.
const (
	// OutcomePosted: the numbers were sent and the service took them.
	OutcomePosted Outcome = iota + 1
	// OutcomeUnchanged: nothing was sent, the numbers being unchanged.
	OutcomeUnchanged
	// OutcomeIncomplete: nothing was sent, some shards having not reported.
	OutcomeIncomplete
	// OutcomeFailed: the attempt failed (Err says why).
	OutcomeFailed
)

// String returns the outcome's label value, such as "posted", or "unknown".
func (o Outcome) String() string {
	if o > OutcomeFailed {
		return "unknown"
	}
	return [...]string{"unknown", "posted", "unchanged", "incomplete", "failed"}[o]
}

// reportQuietly logs a repeated failure at debug level, and calls OnPost.
func (p *Poster) reportQuietly(ctx context.Context, r Result) {
	p.log.LogAttrs(ctx, slog.LevelDebug, "could not post the server count to Top.gg; the token is still refused",
		slog.Duration("retry_in", r.RetryIn), slog.String("error", r.Err.Error()))
	p.notify(ctx, r)
}

// report logs one line for the attempt and calls OnPost.
func (p *Poster) report(ctx context.Context, r Result) {
	attrs := []slog.Attr{slog.Int("servers", r.Servers), slog.Int("shards", r.Shards)}
	switch {
	case r.Outcome == OutcomeUnchanged:
		p.log.LogAttrs(ctx, slog.LevelDebug, "server count unchanged since the last post; not posted", attrs...)
	case r.Err == nil && r.Backfilled > 0:
		attrs = append(attrs, slog.Int("backfilled", r.Backfilled))
		p.log.LogAttrs(ctx, slog.LevelInfo, "posted the samples missed while Top.gg was unreachable, then the server count", attrs...)
	case r.Err == nil:
		p.log.LogAttrs(ctx, slog.LevelInfo, "posted the server count to Top.gg", attrs...)
	default:
		attrs = append(attrs, slog.Duration("retry_in", r.RetryIn), slog.String("error", r.Err.Error()))
		if r.Backfilled > 0 {
			attrs = append(attrs, slog.Int("backfilled", r.Backfilled))
		}
		p.log.LogAttrs(ctx, slog.LevelWarn, "could not post the server count to Top.gg; will retry", attrs...)
	}
	p.notify(ctx, r)
}

// notify calls OnPost, if set, recovering and logging a panic.
func (p *Poster) notify(ctx context.Context, r Result) {
	if p.cfg.OnPost == nil {
		return
	}
	r.PerShard = slices.Clone(r.PerShard) // the loop keeps the last Counts it posted
	if rec := panics.Try(func() { p.cfg.OnPost(r) }); rec != nil {
		attrs := []slog.Attr{slog.String("panic", fmt.Sprint(rec.Value))}
		if p.panicked.CompareAndSwap(false, true) { // the stack once, not once per post
			attrs = append(attrs, slog.String("stack", string(rec.Stack)))
		}
		p.log.LogAttrs(ctx, slog.LevelError, "OnPost panicked", attrs...)
	}
}
