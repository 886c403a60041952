package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/internal/typednil"
)

// Config configures a [Fleet]: what every process of one bot must agree on
// (Bot, ShardCount, the durations) and this process's logger.
type Config struct {
	// Bot names the bot's key space in Redis (see [Key]): the Discord
	// application id is a good choice. Required.
	Bot string
	// ShardCount is the bot's total number of shards, across every process.
	// Required.
	ShardCount int
	// LeaseTTL is the leader lease's time to live (default [defaultLeaseTTL],
	// within [MinLeaseTTL, MaxLeaseTTL]). A dead leader is replaced within
	// about LeaseTTL.
	LeaseTTL time.Duration
	// ReportEvery is how often each process publishes its shards' counts
	// (default [defaultReportEvery]).
	ReportEvery time.Duration
	// MaxAge is how long a silent shard's last count still counts (default
	// [defaultMaxAge]).
	MaxAge time.Duration
	// Logger receives the lease's and the reporter's problems (default:
	// slog.Default()).
	Logger *slog.Logger
}

// MinLeaseTTL and MaxLeaseTTL bound [Config.LeaseTTL]: below a second a GC
// pause costs the leadership; above ten minutes a dead leader leaves the
// leader's jobs (the listing's posts) undone that long.
const MinLeaseTTL, MaxLeaseTTL = time.Second, 10 * time.Minute

// Fleet is who leads a bot's processes, and their counts: the [Lease] and
// [Fleet.Counts], for a caller (plugin.WithFleet) that touches no Redis type.
// Make it with [New] or [Open]; safe for concurrent use; not a job: its parts are.
type Fleet struct {
	rdb    redis.UniversalClient
	owned  bool // Open made rdb: Close closes it
	cfg    Config
	lease  *Lease
	counts *shardCounts
}

// New returns the fleet of cfg.Bot on rdb, which the caller keeps and
// closes. It does not contact Redis. rdb is a *redis.Client (one node, or
// Sentinel's failover client) or a *redis.ClusterClient, for which the lease
// waits for the replicas' acknowledgement of its elections (see "Redis
// Cluster and Sentinel" in the package doc); another UniversalClient (a
// Ring) works, without that wait. A client of your own should turn go-redis's
// maintenance notifications off (MaintNotificationsConfig with Mode
// maintnotifications.ModeDisabled, as [NewClient] does): their "auto" default
// races in go-redis v9.23 with the lease's pinned connection at start. Errors
// wrap [topgg.ErrNilArgument], [ErrBadConfig].
func New(rdb redis.UniversalClient, cfg Config) (*Fleet, error) {
	if typednil.Is(rdb) {
		return nil, errNilClient
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ReportEvery < 0 {
		return nil, fmt.Errorf("%w: report period %v is negative", ErrBadConfig, cfg.ReportEvery)
	}
	if cfg.LeaseTTL != 0 && (cfg.LeaseTTL < MinLeaseTTL || cfg.LeaseTTL > MaxLeaseTTL) {
		return nil, fmt.Errorf("%w: LeaseTTL %v is not between %v and %v", ErrBadConfig, cfg.LeaseTTL, MinLeaseTTL, MaxLeaseTTL)
	}
	lease, err := NewLease(rdb, cfg.Bot, LeaseConfig{TTL: cfg.LeaseTTL, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	counts, err := newShardCounts(rdb, cfg.Bot, cfg.ShardCount, countsConfig{MaxAge: cfg.MaxAge, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	return &Fleet{rdb: rdb, cfg: cfg, lease: lease, counts: counts}, nil
}

// Open is [New] on a client of its own for the URL, which selects the
// deployment (see [NewUniversalClient]): a single node (redis://,
// rediss://), Redis Cluster ([SchemeCluster]) or a master through Sentinel
// ([SchemeSentinel]). The password never shows in errors. [Fleet.Close]
// closes the client.
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
// of the fleet returned. A Fleet from [New] leaves the caller's client open.
func (f *Fleet) Close() error {
	if f == nil || !f.owned {
		return nil
	}
	return f.rdb.Close()
}

// Lease returns the leader lease: run the leader-only jobs under [Lease.Run].
func (f *Fleet) Lease() *Lease {
	if f == nil {
		return nil
	}
	return f.lease
}

// Counts returns what the fleet's counts are to this process, whose own
// shards local counts (the Counter its sessions are attached to): total, the
// fleet's exact total as the [autopost.Source] of the leader's Poster, and
// report, the job every process runs to publish local's ready shards until
// its context is done: on every change (a guild join or leave, an outage, a
// READY, an attach or a detach), at most once per 250 ms, every ReportEvery,
// and once more when stopped with a change unpublished; a failed publish is
// retried within a second.
//
// total takes this process's own shards from local (fresher than its last
// publish) and the others' from Redis, so a post reflects every shard's
// change within 250 ms plus a round trip. It reads every shard's last count in one round trip; its
// Missing is not empty until every shard of [0, ShardCount) has reported (it
// lists those silent for longer than MaxAge), so the Poster never posts a
// partial total. Unavailable is 0 and BotID is local's. A Redis error is
// returned by total (the Poster retries) and logged by report (which retries
// next period; the last counts stay valid for MaxAge). It fails with
// [topgg.ErrNotConfigured] on a Fleet not made by [New] or [Open] and with
// [ErrBadConfig] for a nil Counter.
func (f *Fleet) Counts(local *autopost.Counter) (total autopost.Source, report func(context.Context) error, err error) {
	if f == nil || f.counts == nil {
		return nil, nil, errNotMade
	}
	src, err := newTotalSource(f.counts, local)
	if err != nil {
		return nil, nil, err
	}
	r, err := newCounterReporter(f.counts, local, reporterConfig{Every: f.cfg.ReportEvery, Logger: f.cfg.Logger})
	if err != nil {
		return nil, nil, err
	}
	return src, r.Run, nil
}
