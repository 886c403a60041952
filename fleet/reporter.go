package fleet

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// defaultReportEvery is Config.ReportEvery's default.
const defaultReportEvery = 15 * time.Second

// reporterConfig tunes a reporter. The zero value is ready to use.
type reporterConfig struct {
	// Every is the publish period (default 15 s; at least 100 ms), far
	// below the counts' MaxAge.
	Every time.Duration
	// Logger receives publish failures (default: slog.Default()).
	Logger *slog.Logger

	clock clock.Clock // tests inject a fake; default clock.Real()
}

// minPublishGap is the shortest time between the starts of two publishes:
// a join storm coalesces.
const minPublishGap = 250 * time.Millisecond

// maxRetry caps the wait before publishing again after a failed publish.
const maxRetry = time.Second

// reporter is the job every process of the fleet runs: it publishes the
// process's shard counts at once, on every change, and every period. Make
// it with newReporter; one Run at a time.
type reporter struct {
	counts  *shardCounts
	shards  func() []shardReport
	changed func() <-chan struct{} // nil: publish by the period only
	every   time.Duration
	log     *slog.Logger
	clock   clock.Clock
	running atomic.Bool
}

// newReporter returns a job publishing shards(), this process's shards, to
// counts; shards is called from Run's goroutine.
func newReporter(counts *shardCounts, shards func() []shardReport, cfg reporterConfig) (*reporter, error) {
	if cfg.Every == 0 {
		cfg.Every = defaultReportEvery
	}
	if cfg.Every < 100*time.Millisecond {
		return nil, configError("fleet.Config.ReportEvery", "%v is below 100ms", cfg.Every)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &reporter{counts: counts, shards: shards, every: cfg.Every,
		log: cfg.Logger.With("component", "fleet.reporter"), clock: clock.Or(cfg.clock)}, nil
}

// run publishes until ctx is done, then once more if a change is unpublished,
// and returns nil; Redis errors are logged and retried. A second concurrent
// Run returns [topgg.ErrRunning].
func (r *reporter) run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer r.running.Store(false)
	failures := 0
	for {
		var changed <-chan struct{}
		if r.changed != nil {
			changed = r.changed() // before the publish: a change during it still wakes
		}
		start := r.clock.Now()
		next := r.every
		if err := r.publish(ctx); err == nil {
			failures = 0
		} else {
			failures++
			next = min(next, clock.Backoff(failures, minPublishGap, maxRetry))
			if ctx.Err() == nil {
				r.log.Warn("publishing shard counts failed; retrying", "err", err, "retry_in", next)
			}
		}
		if !r.wait(ctx, changed, next) {
			if closed(changed) {
				r.last(ctx)
			}
			return nil
		}
		// Coalesce the changes until the gap has passed.
		if clock.Sleep(ctx, r.clock, minPublishGap-r.clock.Now().Sub(start)) != nil {
			r.last(ctx)
			return nil
		}
	}
}

// closed reports whether a change channel has fired.
func closed(changed <-chan struct{}) bool {
	select {
	case <-changed:
		return true
	default:
		return false
	}
}

// wait waits for d or a change; false when ctx is done.
func (r *reporter) wait(ctx context.Context, changed <-chan struct{}, d time.Duration) bool {
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
	case <-changed:
	}
	return true
}

// last publishes, after ctx is done, a change not yet published.
func (r *reporter) last(ctx context.Context) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maxRetry)
	defer cancel()
	if err := r.publish(lctx); err != nil {
		r.log.Warn("publishing the last shard counts before stopping failed", "err", err)
	}
}

// publish publishes the shards now, within a period.
func (r *reporter) publish(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, r.every)
	defer cancel()
	return r.counts.publish(pctx, r.shards())
}
