package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/fence"

	"github.com/dblkit/go-topgg/internal/typednil"
)

// defaultMaxAge is countsConfig.MaxAge's default.
const defaultMaxAge = time.Hour

// futureSlack is how far ahead of Redis's clock a shard's report time may lie
// and still count; a later one (a damaged record, a clock stepped back) is
// missing until its process publishes again.
const futureSlack = 5 * time.Second

// recordSize is the bytes per shard in the counts string.
const recordSize = 8

// countsConfig tunes shardCounts. The zero value is ready to use.
type countsConfig struct {
	// MaxAge is how long a silent shard's last count still counts (default
	// 1 h); past it the shard is missing.
	MaxAge time.Duration
	// Logger receives warnings about future reports (default: discard).
	Logger *slog.Logger
}

// shardCounts publishes this process's shard guild counts to Redis and reads
// the fleet's total. Make it with newShardCounts; safe for concurrent use.
type shardCounts struct {
	// One string per bot and shard count, Key(bot, "counts:<shardCount>"),
	// expiring 2*MaxAge after the last publish: at offset shard*8, the guild
	// count and Redis's time of the report, big-endian uint32; zeros: never.
	rdb        redis.UniversalClient
	key        string
	shardCount int
	maxAge     time.Duration
	log        *slog.Logger
	// future is set while the last Total found future reports: logged once.
	future atomic.Bool
}

// shardReport is one shard's guild count as a process reports it.
type shardReport struct {
	Shard  int
	Guilds int
}

// fleetTotal is the fleet's count as the leader reads it.
type fleetTotal struct {
	// Servers is the counted shards' guilds, exact only when Missing is empty.
	Servers int64
	// ShardCount is the bot's number of shards.
	ShardCount int
	// PerShard holds each shard's last count by shard id (0 if missing).
	PerShard []int
	// Missing lists the never reported, stale or future shards, in order.
	Missing []int
	// At is Redis's time when the counts were read.
	At time.Time
}

// newShardCounts returns the counts of bot (see [Key]) for a fleet of shardCount
// shards on rdb. It does not contact Redis.
func newShardCounts(rdb redis.UniversalClient, bot string, shardCount int, cfg countsConfig) (*shardCounts, error) {
	if typednil.Is(rdb) {
		return nil, errNilClient
	}
	if err := fence.CheckBot(bot); err != nil {
		return nil, err
	}
	if shardCount < 1 || shardCount > math.MaxInt32/recordSize {
		return nil, configError("fleet.Config.ShardCount", "%d is not a shard count", shardCount)
	}
	if cfg.MaxAge == 0 {
		cfg.MaxAge = defaultMaxAge
	}
	if cfg.MaxAge < time.Second {
		return nil, configError("fleet.countsConfig.MaxAge", "%v is below 1s", cfg.MaxAge)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &shardCounts{rdb: rdb, key: Key(bot, "counts:"+strconv.Itoa(shardCount)), shardCount: shardCount, maxAge: cfg.MaxAge,
		log: cfg.Logger.With("component", "fleet.counts", "bot", bot)}, nil
}

// publishScript writes the given shards' records, stamped with Redis's time,
// and refreshes the key's expiry. EVAL, not EVALSHA: no NOSCRIPT round trip.
// KEYS[1] counts key; ARGV[1] key TTL ms; ARGV[2..] shard, count pairs.
const publishScript = `
local now = tonumber(redis.call('TIME')[1])
for i = 2, #ARGV, 2 do
  redis.call('SETRANGE', KEYS[1], tonumber(ARGV[i]) * 8, struct.pack('>I4I4', tonumber(ARGV[i+1]), now))
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return now
`

// publish records this process's shards' guild counts. A shard out of
// [0, shardCount) or a bad count is a *[topgg.ConfigError], and nothing is
// written.
func (c *shardCounts) publish(ctx context.Context, shards []shardReport) error {
	if len(shards) == 0 {
		return nil
	}
	args := make([]any, 0, 1+2*len(shards))
	args = append(args, (2 * c.maxAge).Milliseconds())
	for _, s := range shards {
		if s.Shard < 0 || s.Shard >= c.shardCount {
			return configError("shard", "%d is outside [0, %d)", s.Shard, c.shardCount)
		}
		if s.Guilds < 0 || int64(s.Guilds) > math.MaxUint32 {
			return configError("shard", "%d has %d guilds", s.Shard, s.Guilds)
		}
		args = append(args, s.Shard, s.Guilds)
	}
	if err := c.rdb.Eval(ctx, publishScript, []string{c.key}, args...).Err(); err != nil {
		return fmt.Errorf("fleet: publish %d shard counts: %w", len(shards), err)
	}
	return nil
}

// total reads every shard's last count and sums them; shards never reported,
// stale or in the future are listed in Missing and add nothing.
func (c *shardCounts) total(ctx context.Context) (fleetTotal, error) {
	var now *redis.TimeCmd
	var data *redis.StringCmd
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		now = p.Time(ctx)
		data = p.GetRange(ctx, c.key, 0, int64(c.shardCount*recordSize-1))
		return nil
	})
	if err != nil {
		return fleetTotal{}, fmt.Errorf("fleet: read shard counts: %w", err)
	}
	t, future := c.sum(now.Val(), data.Val())
	c.noteFuture(ctx, future, t.At)
	return t, nil
}

// noteFuture logs the shards whose report lies in the future, once per episode.
func (c *shardCounts) noteFuture(ctx context.Context, future []int, now time.Time) {
	if len(future) == 0 {
		c.future.Store(false)
		return
	}
	if c.future.Swap(true) {
		return
	}
	c.log.WarnContext(ctx, "shard counts stamped ahead of Redis's clock are treated as missing until their process publishes again",
		slog.Any("shards", future), slog.Time("redis_time", now), slog.Duration("slack", futureSlack))
}

// sum decodes the records, which may stop short of shardCount, and also
// returns the future shards.
func (c *shardCounts) sum(now time.Time, data string) (fleetTotal, []int) {
	t := fleetTotal{ShardCount: c.shardCount, PerShard: make([]int, c.shardCount), At: now}
	nowSec := now.Unix()
	slack := int64(futureSlack / time.Second)
	var future []int
	for shard := range c.shardCount {
		off := shard * recordSize
		if off+recordSize > len(data) {
			t.Missing = append(t.Missing, shard)
			continue
		}
		guilds := be32(data, off)
		at := int64(be32(data, off+4))
		if at > nowSec+slack {
			// Not stamped by this clock as it runs now: counting it would
			// post a number nobody vouches for, and keep it forever.
			future = append(future, shard)
			t.Missing = append(t.Missing, shard)
			continue
		}
		if at == 0 || time.Duration(nowSec-at)*time.Second > c.maxAge {
			t.Missing = append(t.Missing, shard)
			continue
		}
		t.PerShard[shard] = int(guilds)
		t.Servers += int64(guilds)
	}
	return t, future
}

// be32 decodes a big-endian uint32 at off from a string, without copying it.
func be32(s string, off int) uint32 {
	_ = s[off+3] // one bounds check
	return uint32(s[off])<<24 | uint32(s[off+1])<<16 | uint32(s[off+2])<<8 | uint32(s[off+3])
}
