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

// statsPost is a body of POST /bots/:id/stats, decoded: ServerCount the sum
// of a per-shard server_count, Shards that array or shards.
type statsPost struct {
	topgg.BotStats
	hasShardCount bool
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
	if b, ok := s.botOr404(c); ok {
		writeJSON(c.w, http.StatusOK, struct {
			ServerCount int   `json:"server_count,omitempty"`
			Shards      []int `json:"shards"`
			ShardCount  int   `json:"shard_count,omitempty"`
		}{b.ServerCount, append([]int{}, b.Shards...), b.ShardCount})
	}
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
	s.legacyStats = &st.BotStats
	c.w.WriteHeader(http.StatusOK)
}

// applyLegacyStats folds a post into the bot's stats: a list replaces the
// shards; a shard_id's count updates its slot and the total.
func applyLegacyStats(b *Bot, st statsPost) {
	b.ServerCount = st.ServerCount
	switch {
	case st.Shards != nil:
		b.Shards = slices.Clone(st.Shards)
	case st.ShardID != nil:
		if size := max(*st.ShardID+1, st.ShardCount); len(b.Shards) < size {
			b.Shards = append(b.Shards, make([]int, size-len(b.Shards))...)
		}
		b.Shards[*st.ShardID] = st.ServerCount
		b.ServerCount = sum(b.Shards)
	}
	if st.hasShardCount {
		b.ShardCount = st.ShardCount
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
	st.ShardID = raw.ShardID
	if st.hasShardCount = raw.ShardCount != nil; st.hasShardCount {
		st.ShardCount = *raw.ShardCount
	}
	perShard := bytes.HasPrefix(raw.ServerCount, []byte("["))
	switch {
	case len(raw.ServerCount) == 0 || string(raw.ServerCount) == "null":
		return st, errors.New("server_count is required")
	case perShard && raw.Shards != nil:
		return st, errors.New("send shards either as server_count or as shards, not both")
	case perShard:
		err = json.Unmarshal(raw.ServerCount, &st.Shards)
		st.ServerCount = sum(st.Shards)
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
	switch {
	case slices.ContainsFunc(st.Shards, func(n int) bool { return n < 0 }), st.ServerCount < 0, st.ShardCount < 0,
		st.ShardID != nil && *st.ShardID < 0:
		return errors.New("counts must be >= 0")
	case st.Shards != nil && len(st.Shards) == 0:
		return errors.New("shards must not be empty")
	case st.ShardID != nil && st.hasShardCount && *st.ShardID >= st.ShardCount:
		return errors.New("shard_id must be less than shard_count")
	}
	return nil
}

func sum(ns []int) (total int) {
	for _, n := range ns {
		total += n
	}
	return total
}
