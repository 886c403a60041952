package fleet

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dblkit/go-topgg/internal/typednil"
)

// DefaultMaxAge is how long a shard's last count is kept when its process
// stops reporting, when CountsConfig.MaxAge is zero.
const DefaultMaxAge = time.Hour

// recordSize is the bytes per shard in the counts string: the guild count
// and the Redis time (unix seconds) of the report, both big-endian uint32.
const recordSize = 8

// CountsConfig tunes [Counts]. The zero value is ready to use.
type CountsConfig struct {
	// MaxAge is how long a shard's last reported count still counts after its
	// process stopped reporting (default 1 h: as in a Discord outage, its
	// guilds still have the bot). Past it the shard is missing.
	MaxAge time.Duration
}

// Counts publishes this process's shard guild counts to Redis and reads the
// fleet's total. Layout (why: small and fast at 20,000+ shards): one string
// per bot and shard count, key Key(bot, "counts:<shardCount>"), holding an
// 8-byte record per shard at offset shard*8: guild count then report time,
// both big-endian uint32, the time taken from Redis's clock (so that the
// machines' clocks do not matter). A record of zeros means "never reported".
// That is 8 bytes of Redis memory per shard; the total reads it with one
// GETRANGE. A new shard count starts a new key, so a resharded fleet never
// mixes layouts; the key expires 2*MaxAge after the last publish.
//
// Make it with [NewCounts]; safe for concurrent use.
type Counts struct {
	rdb        redis.UniversalClient
	key        string
	shardCount int
	maxAge     time.Duration
}

// ShardCount is one shard's guild count as a process reports it.
type ShardCount struct {
	Shard  int
	Guilds int
}

// Total is the fleet's count as the leader reads it.
type Total struct {
	// Servers is the sum of the counted shards' guilds. It is exact only
	// when Missing is empty.
	Servers int64
	// ShardCount is the bot's number of shards.
	ShardCount int
	// PerShard holds each shard's last count, by shard id (0 for a missing
	// shard). v0 stats post it as the shards list.
	PerShard []int
	// Missing lists the shards that never reported or whose last report is
	// older than MaxAge, in increasing order.
	Missing []int
	// Oldest is the age of the oldest report that was counted.
	Oldest time.Duration
	// At is Redis's time when the counts were read.
	At time.Time
}

// Postable reports whether the total covers every shard: when false the
// caller posts nothing and logs Missing.
func (t Total) Postable() bool { return t.ShardCount > 0 && len(t.Missing) == 0 }

// NewCounts returns the counts of bot (see [Key]) for a fleet of shardCount
// shards on rdb. It does not contact Redis.
func NewCounts(rdb redis.UniversalClient, bot string, shardCount int, cfg CountsConfig) (*Counts, error) {
	if typednil.Is(rdb) {
		return nil, errNilClient
	}
	if err := checkBot(bot); err != nil {
		return nil, err
	}
	if shardCount < 1 || shardCount > math.MaxInt32/recordSize {
		return nil, fmt.Errorf("%w: shard count %d", ErrBadConfig, shardCount)
	}
	if cfg.MaxAge == 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.MaxAge < time.Second {
		return nil, fmt.Errorf("%w: max age %v is below 1s", ErrBadConfig, cfg.MaxAge)
	}
	return &Counts{rdb: rdb, key: Key(bot, "counts:"+strconv.Itoa(shardCount)), shardCount: shardCount, maxAge: cfg.MaxAge}, nil
}

// publishScript writes the records of the given shards, stamped with Redis's
// time, and refreshes the key's expiry: one EVAL, one round trip, whatever
// the number of shards. EVAL (not EVALSHA) so that it stays one round trip
// after a Redis restart or SCRIPT FLUSH; Redis caches the compiled body.
//
// KEYS[1] counts key; ARGV[1] key TTL ms; ARGV[2..] shard, count pairs.
const publishScript = `
local now = tonumber(redis.call('TIME')[1])
for i = 2, #ARGV, 2 do
  redis.call('SETRANGE', KEYS[1], tonumber(ARGV[i]) * 8, struct.pack('>I4I4', tonumber(ARGV[i+1]), now))
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return now
`

// Publish records this process's shards' guild counts, in one round trip.
// An empty list is a no-op. A shard out of [0, shardCount) or a negative or
// oversized count is an error wrapping [ErrBadConfig], and nothing is written.
func (c *Counts) Publish(ctx context.Context, shards []ShardCount) error {
	if c == nil || c.rdb == nil {
		return errNotMade
	}
	if len(shards) == 0 {
		return nil
	}
	args := make([]any, 0, 1+2*len(shards))
	args = append(args, (2 * c.maxAge).Milliseconds())
	for _, s := range shards {
		if s.Shard < 0 || s.Shard >= c.shardCount {
			return fmt.Errorf("%w: shard %d is outside [0, %d)", ErrBadConfig, s.Shard, c.shardCount)
		}
		if s.Guilds < 0 || int64(s.Guilds) > math.MaxUint32 {
			return fmt.Errorf("%w: shard %d has %d guilds", ErrBadConfig, s.Shard, s.Guilds)
		}
		args = append(args, s.Shard, s.Guilds)
	}
	if err := c.rdb.Eval(ctx, publishScript, []string{c.key}, args...).Err(); err != nil {
		return fmt.Errorf("fleet: publish %d shard counts: %w", len(shards), err)
	}
	return nil
}

// Total reads every shard's last count in one round trip (TIME and GETRANGE
// pipelined) and sums them. Shards that never reported, or whose last report
// is older than MaxAge by Redis's clock, are listed in Missing and add
// nothing; the total is then not postable.
func (c *Counts) Total(ctx context.Context) (Total, error) {
	if c == nil || c.rdb == nil {
		return Total{}, errNotMade
	}
	var now *redis.TimeCmd
	var data *redis.StringCmd
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		now = p.Time(ctx)
		data = p.GetRange(ctx, c.key, 0, int64(c.shardCount*recordSize-1))
		return nil
	})
	if err != nil {
		return Total{}, fmt.Errorf("fleet: read shard counts: %w", err)
	}
	return c.sum(now.Val(), data.Val()), nil
}

// sum decodes the records (data may be shorter than shardCount records when
// the highest shards never reported).
func (c *Counts) sum(now time.Time, data string) Total {
	t := Total{ShardCount: c.shardCount, PerShard: make([]int, c.shardCount), At: now}
	nowSec := now.Unix()
	oldest := nowSec
	for shard := range c.shardCount {
		off := shard * recordSize
		if off+recordSize > len(data) {
			t.Missing = append(t.Missing, shard)
			continue
		}
		guilds := be32(data, off)
		at := int64(be32(data, off+4))
		if at == 0 || time.Duration(nowSec-at)*time.Second > c.maxAge {
			t.Missing = append(t.Missing, shard)
			continue
		}
		t.PerShard[shard] = int(guilds)
		t.Servers += int64(guilds)
		oldest = min(oldest, at)
	}
	t.Oldest = time.Duration(nowSec-oldest) * time.Second
	return t
}

// be32 decodes a big-endian uint32 at off from a string, without copying the
// (up to megabytes of) records into a []byte first.
func be32(s string, off int) uint32 {
	_ = s[off+3] // one bounds check
	return uint32(s[off])<<24 | uint32(s[off+1])<<16 | uint32(s[off+2])<<8 | uint32(s[off+3])
}
