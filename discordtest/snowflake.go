package discordtest

import (
	"fmt"
	"strconv"
	"time"

	"github.com/dblkit/go-topgg/internal/snowflake"
)

// discordEpoch is the first millisecond of 2015, the zero of snowflake time.
const discordEpoch = 1420070400000

// guildIDBase is the snowflake timestamp (ms since discordEpoch) that
// GuildIDForShard counts from: 2021-01-01, well before any ID the Server
// makes from the clock, so the two never collide.
const guildIDBase = 1609459200000 - discordEpoch

// maxTimestamp is the largest timestamp a snowflake holds (42 bits).
const maxTimestamp = 1<<42 - 1

// parseSnowflake checks that id is a snowflake as Discord writes it ("007"
// and "7" must not be two guilds) and returns its value.
func parseSnowflake(id string) (uint64, error) {
	if !snowflake.Valid(id) {
		return 0, fmt.Errorf("%q: %w", id, ErrInvalidSnowflake)
	}
	v, _ := snowflake.Parse(id)
	return v, nil
}

// ShardForGuild returns the shard, out of shardCount, that receives the
// events of guild guildID: (guild_id >> 22) % shardCount.
func ShardForGuild(guildID string, shardCount int) (int, error) {
	if shardCount < 1 {
		return 0, fmt.Errorf("discordtest: shard count %d: must be at least 1", shardCount)
	}
	v, err := parseSnowflake(guildID)
	if err != nil {
		return 0, fmt.Errorf("discordtest: guild: %w", err)
	}
	return snowflake.Shard(v, shardCount), nil
}

// GuildIDForShard returns the n-th guild ID (n >= 0) that lands on shard
// shardID out of shardCount. For one shardCount, distinct (n, shardID) pairs
// give distinct IDs, and the same pair always gives the same ID, so tests can
// build their guild lists without a Server.
//
// If n < 0, shardCount < 1, shardID is not in [0, shardCount) or n is too
// large, it returns a string that is not a snowflake and names the mistake:
// every function and method of this package refuses it with
// ErrInvalidSnowflake (wrapped), so the mistake fails the test where the ID
// is used, without a panic.
func GuildIDForShard(n, shardID, shardCount int) string {
	invalid := fmt.Sprintf("invalid-GuildIDForShard(%d,%d,%d)", n, shardID, shardCount)
	if n < 0 || shardCount < 1 || shardID < 0 || shardID >= shardCount {
		return invalid
	}
	base := uint64(guildIDBase) - uint64(guildIDBase)%uint64(shardCount)
	ts := base + uint64(n)*uint64(shardCount) + uint64(shardID)
	if ts > maxTimestamp {
		return invalid
	}
	return strconv.FormatUint(ts<<22, 10)
}

// nextIDLocked returns a new snowflake from the clock, strictly greater than
// every ID it returned before. The caller holds s.mu.
func (s *Server) nextIDLocked() string {
	id := uint64(time.Now().UnixMilli()-discordEpoch) << 22
	if id <= s.lastID {
		id = s.lastID + 1
	}
	s.lastID = id
	return strconv.FormatUint(id, 10)
}
