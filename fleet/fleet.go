package fleet

import (
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
	// LeaseTTL is the leader lease's time to live (default [DefaultLeaseTTL]).
	// A dead leader is replaced within about LeaseTTL.
	LeaseTTL time.Duration
	// ReportEvery is how often each process publishes its shards' counts
	// (default [DefaultReportEvery]).
	ReportEvery time.Duration
	// MaxAge is how long a silent shard's last count still counts (default
	// [DefaultMaxAge]).
	MaxAge time.Duration
	// Logger receives the lease's and the reporter's problems (default:
	// discard).
	Logger *slog.Logger
}

// Fleet bundles the Redis-backed parts one process of a fleet needs, so that
// a caller (the plugin) uses them without touching Redis types: the leader
// [Lease], the shard [Counts] with their [Reporter] and leader [Source], the
// fenced command [HashStore] and the shared [VoteStore]. Make it with [New] or [Open]; safe for
// concurrent use. It is not a job: its parts are.
type Fleet struct {
	rdb    redis.UniversalClient
	owned  bool // Open made rdb: Close closes it
	cfg    Config
	lease  *Lease
	counts *Counts
	hashes *HashStore
	votes  *VoteStore
}

// New returns the fleet of cfg.Bot on rdb, which the caller keeps and
// closes. It does not contact Redis. Errors wrap [topgg.ErrNilArgument],
// [ErrBadBot] or [ErrBadConfig].
func New(rdb redis.UniversalClient, cfg Config) (*Fleet, error) {
	if typednil.Is(rdb) {
		return nil, errNilClient
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ReportEvery < 0 {
		return nil, fmt.Errorf("%w: report period %v is negative", ErrBadConfig, cfg.ReportEvery)
	}
	lease, err := NewLease(rdb, cfg.Bot, LeaseConfig{TTL: cfg.LeaseTTL, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	counts, err := NewCounts(rdb, cfg.Bot, cfg.ShardCount, CountsConfig{MaxAge: cfg.MaxAge})
	if err != nil {
		return nil, err
	}
	hashes, err := NewHashStore(lease)
	if err != nil {
		return nil, err
	}
	votes, err := NewVoteStore(lease)
	if err != nil {
		return nil, err
	}
	return &Fleet{rdb: rdb, cfg: cfg, lease: lease, counts: counts, hashes: hashes, votes: votes}, nil
}

// Open is [New] on a client of its own for a redis:// or rediss:// URL (see
// [NewClient]; the password never shows in errors). [Fleet.Close] closes it.
func Open(redisURL string, cfg Config) (*Fleet, error) {
	rdb, err := NewClient(redisURL)
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

// Counts returns the shard counts of the fleet.
func (f *Fleet) Counts() *Counts {
	if f == nil {
		return nil
	}
	return f.counts
}

// HashStore returns the command hash store, fenced by the lease.
func (f *Fleet) HashStore() *HashStore {
	if f == nil {
		return nil
	}
	return f.hashes
}

// VoteStore returns the vote store shared by the fleet, its leader writes
// fenced by the lease.
func (f *Fleet) VoteStore() *VoteStore {
	if f == nil {
		return nil
	}
	return f.votes
}

// ShardCount returns the bot's total shard count.
func (f *Fleet) ShardCount() int {
	if f == nil {
		return 0
	}
	return f.cfg.ShardCount
}

// Source returns the fleet total for the leader's Poster; local is this
// process's Counter (see [NewSource]).
func (f *Fleet) Source(local *autopost.Counter) (*Source, error) {
	if f == nil {
		return nil, errNotMade
	}
	return NewSource(f.counts, local)
}

// Reporter returns the job that publishes local's shards every ReportEvery
// (see [NewCounterReporter]); every process runs one.
func (f *Fleet) Reporter(local *autopost.Counter) (*Reporter, error) {
	if f == nil {
		return nil, errNotMade
	}
	return NewCounterReporter(f.counts, local, ReporterConfig{Every: f.cfg.ReportEvery, Logger: f.cfg.Logger})
}
