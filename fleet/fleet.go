package fleet

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/internal/typednil"
)

// Config configures a [Fleet]; every process of one bot must agree on all but
// the Logger.
type Config struct {
	// Bot names the bot's key space in Redis (see [Key]): the Discord
	// application id is a good choice. Required.
	Bot string
	// ShardCount is the bot's total number of shards, across every process.
	// Required.
	ShardCount int
	// LeaseTTL is the leader lease's time to live (default [defaultLeaseTTL],
	// within [MinLeaseTTL, MaxLeaseTTL]); a dead leader is replaced within it.
	LeaseTTL time.Duration
	// ReportEvery is how often each process publishes its shards' counts
	// (default [defaultReportEvery]).
	ReportEvery time.Duration
	// Logger receives the lease's and the reporter's problems (default slog.Default()).
	Logger *slog.Logger
	// OnChange, if set, is called from the lease's Run goroutine after each
	// leadership transition; it must not block. A panic in it is recovered and logged.
	OnChange func(LeaseState)
}

// MinLeaseTTL and MaxLeaseTTL bound [Config.LeaseTTL].
const MinLeaseTTL, MaxLeaseTTL = time.Second, 10 * time.Minute

// Fleet is a bot's leader [Lease] and its processes' [Fleet.Counts]. Make it
// with [New] or [Open]; it is safe for concurrent use.
type Fleet struct {
	rdb    redis.UniversalClient
	owned  bool // Open made rdb: Close closes it
	cfg    Config
	lease  *Lease
	counts *shardCounts
}

// New returns the fleet of cfg.Bot on rdb, which the caller keeps and closes;
// it makes no request. Elections are replica-acknowledged on a *redis.Client or
// *redis.ClusterClient. Errors: [topgg.ErrNilArgument], a *[topgg.ConfigError].
func New(rdb redis.UniversalClient, cfg Config) (*Fleet, error) {
	if typednil.Is(rdb) {
		return nil, errNilClient
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ReportEvery < 0 {
		return nil, configError("fleet.Config.ReportEvery", "%v is negative", cfg.ReportEvery)
	}
	if cfg.LeaseTTL != 0 && (cfg.LeaseTTL < MinLeaseTTL || cfg.LeaseTTL > MaxLeaseTTL) {
		return nil, configError("fleet.Config.LeaseTTL", "%v is not between %v and %v", cfg.LeaseTTL, MinLeaseTTL, MaxLeaseTTL)
	}
	lease, err := newLease(rdb, cfg.Bot, leaseConfig{TTL: cfg.LeaseTTL, Logger: cfg.Logger, OnChange: cfg.OnChange})
	if err != nil {
		return nil, err
	}
	counts, err := newShardCounts(rdb, cfg.Bot, cfg.ShardCount, countsConfig{Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	return &Fleet{rdb: rdb, cfg: cfg, lease: lease, counts: counts}, nil
}

// Open is [New] on a client of its own for the URL (see [NewUniversalClient]),
// which [Fleet.Close] closes. The password never shows in errors.
func Open(redisURL string, cfg Config) (*Fleet, error) {
	rdb, err := NewUniversalClient(redisURL)
	if err != nil {
		return nil, err
	}
	f, err := New(rdb, cfg)
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	f.owned = true
	return f, nil
}

// Close closes the Redis client if [Open] made it; call it after every job
// of the fleet returned.
func (f *Fleet) Close() error {
	if !f.owned {
		return nil
	}
	return f.rdb.Close()
}

// Lease returns the leader lease: run the leader-only jobs under [Lease.Run].
func (f *Fleet) Lease() *Lease { return f.lease }

// Counts returns total, the fleet's total as the leader Poster's
// [autopost.Source] (shards silent for an hour are Missing, so no partial total is
// posted), and report, the job every process runs to publish local's shards.
// A nil Counter is a *[topgg.ConfigError].
func (f *Fleet) Counts(local *autopost.Counter) (total autopost.Source, report func(context.Context) error, err error) {
	src, err := newTotalSource(f.counts, local)
	if err != nil {
		return nil, nil, err
	}
	r, err := newCounterReporter(f.counts, local, reporterConfig{Every: f.cfg.ReportEvery, Logger: f.cfg.Logger})
	if err != nil {
		return nil, nil, err
	}
	return src, r.run, nil
}

// Format prints the Fleet as "fleet.Fleet" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*Fleet) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "fleet.Fleet") }
