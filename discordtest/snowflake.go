package discordtest

import (
	"fmt"
	"strconv"
	"time"

	"github.com/dblkit/go-topgg/internal/discord"
)

const (
	discordEpoch = 1420070400000 // 2015-01-01 in ms, the zero of snowflake time
	// guildIDBase is where GuildIDForShard counts from: 2021-01-01, before
	// any ID the Server makes from the clock, so the two never collide.
	guildIDBase  = 1609459200000 - discordEpoch
	maxTimestamp = 1<<42 - 1
)

// parseSnowflake checks that id is a snowflake as Discord writes it ("007"
// and "7" must not be two guilds) and returns its value.
func parseSnowflake(id string) (uint64, error) {
	if !discord.ValidID(id) {
		return 0, fmt.Errorf("%q: %w", id, errInvalidSnowflake)
	}
	v, _ := discord.ParseID(id)
	return v, nil
}

// GuildIDForShard returns the n-th guild ID (n >= 0) that lands on shard
// shardID of shardCount, the same for the same arguments; bad arguments give a
// string naming the mistake, which the Server refuses.
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
