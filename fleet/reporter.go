package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
)

// DefaultReportEvery is the publish period of a [Reporter] when
// ReporterConfig.Every is zero.
const DefaultReportEvery = 15 * time.Second

// ReporterConfig tunes a [Reporter]. The zero value is ready to use.
type ReporterConfig struct {
	// Every is the publish period (default 15 s; at least 100 ms). Keep it
	// far below the counts' MaxAge.
	Every time.Duration
	// Logger receives publish failures (default: discard).
	Logger *slog.Logger

	clock clock.Clock // tests inject a fake; default clock.Real()
}

// Reporter is the job every process of the fleet runs: it publishes the
// process's shard counts at once and then every period, one round trip each.
// A failed publish is logged and tried again at the next period (the last
// published counts stay valid for MaxAge meanwhile). Make it with
// [NewReporter]; one Run at a time.
type Reporter struct {
	counts  *Counts
	shards  func() []ShardCount
	changed func() <-chan struct{} // nil: publish by the period only
	every   time.Duration
	log     *slog.Logger
	clock   clock.Clock
	running atomic.Bool

	mu   sync.Mutex
	stat ReporterStats
}

// ReporterStats is a snapshot of a Reporter's work, for metrics.
type ReporterStats struct {
	// Published and Failed count the publishes that succeeded and failed.
	Published, Failed uint64
	// Last is the local time of the last successful publish.
	Last time.Time
}

// NewReporter returns a job publishing shards() to counts. shards is called
// from Run's goroutine once per period and must be safe to call from it; it
// returns this process's shards only.
func NewReporter(counts *Counts, shards func() []ShardCount, cfg ReporterConfig) (*Reporter, error) {
	if counts == nil || counts.rdb == nil {
		return nil, fmt.Errorf("fleet: nil or zero *Counts: %w", topgg.ErrNotConfigured)
	}
	if shards == nil {
		return nil, fmt.Errorf("%w: nil shards function", ErrBadConfig)
	}
	if cfg.Every == 0 {
		cfg.Every = DefaultReportEvery
	}
	if cfg.Every < 100*time.Millisecond {
		return nil, fmt.Errorf("%w: report period %v is below 100ms", ErrBadConfig, cfg.Every)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Reporter{counts: counts, shards: shards, every: cfg.Every,
		log: cfg.Logger.With("component", "fleet.reporter"), clock: clock.Or(cfg.clock)}, nil
}

// Run publishes until ctx is done, then returns nil. A second concurrent Run
// returns [topgg.ErrRunning]. Redis errors never end it.
func (r *Reporter) Run(ctx context.Context) error {
	if r == nil || r.counts == nil {
		return errNotMade
	}
	if !r.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer r.running.Store(false)
	for {
		var changed <-chan struct{}
		if r.changed != nil {
			changed = r.changed() // before the publish: a change during it still wakes
		}
		r.publish(ctx)
		if !r.wait(ctx, changed) {
			return nil
		}
	}
}

// wait waits for the period or a change; false when ctx is done.
func (r *Reporter) wait(ctx context.Context, changed <-chan struct{}) bool {
	t := r.clock.NewTimer(r.every)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
	case <-changed:
	}
	return true
}

func (r *Reporter) publish(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, r.every)
	defer cancel()
	err := r.counts.Publish(pctx, r.shards())
	r.mu.Lock()
	if err == nil {
		r.stat.Published++
		r.stat.Last = r.clock.Now()
	} else {
		r.stat.Failed++
	}
	r.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		r.log.Warn("publishing shard counts failed; retrying next period", "err", err, "retry_in", r.every)
	}
}

// Stats returns what the Reporter did so far. Safe for concurrent use.
func (r *Reporter) Stats() ReporterStats {
	if r == nil {
		return ReporterStats{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stat
}
