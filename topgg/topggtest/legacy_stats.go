package topggtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/dblkit/go-topgg/topgg"
)

// statsPost is a body of POST /bots/:id/stats, decoded.
type statsPost struct {
	ServerCount int   // server_count, or the sum of its per-shard array
	Shards      []int // shards, or server_count's array; nil if neither
	ShardID     *int  // nil when absent
	ShardCount  *int  // nil when absent
}

// LegacyStats returns the last v0 stats posted (ServerCount the sum of a
// per-shard server_count, Shards that array) and whether any were.
func (s *Server) LegacyStats() (topgg.BotStats, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.legacyStats == nil {
		return topgg.BotStats{}, false
	}
	st := *s.legacyStats
	st.Shards = slices.Clone(st.Shards)
	return st, true
}

// getLegacyStats serves GET /bots/:id/stats for any listed bot.
func (s *Server) getLegacyStats(c *call) {
	b, ok := s.botOr404(c)
	if !ok {
		return
	}
	writeJSON(c.w, http.StatusOK, struct {
		ServerCount int   `json:"server_count,omitempty"`
		Shards      []int `json:"shards"`
		ShardCount  int   `json:"shard_count,omitempty"`
	}{b.ServerCount, append([]int{}, b.Shards...), b.ShardCount})
}

// postLegacyStats serves POST /bots/:id/stats for the token's own bot.
func (s *Server) postLegacyStats(c *call) {
	if !s.ownBotOnly(c) {
		return
	}
	st, err := decodeLegacyStats(c.body)
	if err != nil {
		writeLegacyError(c.w, http.StatusBadRequest, err.Error())
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	applyLegacyStats(&s.bots[s.botIndexLocked(c.param)], st) // ownBotOnly found it
	s.legacyStats = &topgg.BotStats{ServerCount: st.ServerCount, Shards: st.Shards, ShardID: st.ShardID}
	if st.ShardCount != nil {
		s.legacyStats.ShardCount = *st.ShardCount
	}
	c.w.WriteHeader(http.StatusOK)
}

// applyLegacyStats folds a post into the bot's stats: a list replaces the
// shards; a shard_id's count updates its slot and the total.
func applyLegacyStats(b *Bot, st statsPost) {
	total := st.ServerCount
	switch {
	case st.Shards != nil:
		b.Shards = slices.Clone(st.Shards)
	case st.ShardID != nil:
		size := *st.ShardID + 1
		if st.ShardCount != nil {
			size = max(size, *st.ShardCount)
		}
		for len(b.Shards) < size {
			b.Shards = append(b.Shards, 0)
		}
		b.Shards[*st.ShardID] = st.ServerCount
		total = 0
		for _, n := range b.Shards {
			total += n
		}
	}
	b.ServerCount = total
	if st.ShardCount != nil {
		b.ShardCount = *st.ShardCount
	}
}

// decodeLegacyStats checks a v0 stats body as Top.gg does, each count a JSON
// integer >= 0 (server_count may be per shard); the error is its 400's.
func decodeLegacyStats(body []byte) (st statsPost, err error) {
	var raw struct {
		ServerCount json.RawMessage `json:"server_count"`
		Shards      []int           `json:"shards"`
		ShardID     *int            `json:"shard_id"`
		ShardCount  *int            `json:"shard_count"`
	}
	if err := decodeStrict(body, &raw); err != nil {
		return st, fmt.Errorf("invalid body: %v", err)
	}
	st.ShardID, st.ShardCount = raw.ShardID, raw.ShardCount
	perShard := bytes.HasPrefix(raw.ServerCount, []byte("["))
	switch {
	case len(raw.ServerCount) == 0 || string(raw.ServerCount) == "null":
		return st, errors.New("server_count is required")
	case perShard && raw.Shards != nil:
		return st, errors.New("send shards either as server_count or as shards, not both")
	case perShard:
		err = json.Unmarshal(raw.ServerCount, &st.Shards)
		for _, n := range st.Shards {
			st.ServerCount += n
		}
	default:
		st.Shards = raw.Shards
		err = json.Unmarshal(raw.ServerCount, &st.ServerCount)
	}
	if err != nil {
		return st, fmt.Errorf("server_count: %v", err)
	}
	return st, st.check()
}

// check applies the rules json.Unmarshal does not.
func (st statsPost) check() error {
	counts := slices.Concat(st.Shards, []int{st.ServerCount})
	for _, p := range []*int{st.ShardID, st.ShardCount} {
		if p != nil {
			counts = append(counts, *p)
		}
	}
	switch {
	case slices.ContainsFunc(counts, func(n int) bool { return n < 0 }):
		return errors.New("counts must be >= 0")
	case st.Shards != nil && len(st.Shards) == 0:
		return errors.New("shards must not be empty")
	case st.ShardID != nil && st.ShardCount != nil && *st.ShardID >= *st.ShardCount:
		return errors.New("shard_id must be less than shard_count")
	}
	return nil
}
