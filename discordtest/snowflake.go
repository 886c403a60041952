package discordtest

import (
	"fmt"
	"strconv"
	"time"
)

const (
	discordEpoch = 1420070400000 // 2015-01-01 in ms, the zero of snowflake time
	// guildIDBase is where GuildIDForShard counts from: 2021-01-01, before
	// any ID the Server makes from the clock, so the two never collide.
	guildIDBase  = 1609459200000 - discordEpoch
	maxTimestamp = 1<<42 - 1
)

// parseSnowflake checks that id is a snowflake and returns its value.
func parseSnowflake(id string) (uint64, error) {
	v, err := strconv.ParseUint(id, 10, 64)
	// Only canonical decimal: "007" and "7" must not be two guilds.
	if err != nil || id[0] == '+' || (len(id) > 1 && id[0] == '0') {
		return 0, fmt.Errorf("%q: %w", id, ErrInvalidSnowflake)
	}
	return v, nil
}

// shardOf is Discord's routing rule: (guild_id >> 22) % shard_count.
func shardOf(id uint64, shardCount int) int {
	return int((id >> 22) % uint64(shardCount))
}

// GuildIDForShard returns the n-th guild ID (n >= 0) that lands on shard
// shardID out of shardCount: distinct pairs give distinct IDs, the same pair
// the same ID. On bad arguments it returns a string that names the mistake
// and that this package refuses with ErrInvalidSnowflake where it is used.
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
