package topggtest

import (
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
func (s *Server) LegacyStats() (topgg.StatsUpdate, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.legacyStats == nil {
		return topgg.StatsUpdate{}, false
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
		ServerCount *int  `json:"server_count,omitempty"`
		Shards      []int `json:"shards"`
		ShardCount  *int  `json:"shard_count,omitempty"`
	}{nullable(b.ServerCount), orEmpty(b.Shards), nullable(b.ShardCount)})
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
	i := slices.IndexFunc(s.bots, func(x Bot) bool { return x.ID == c.param }) // ownBotOnly found it
	applyLegacyStats(&s.bots[i], st)
	s.legacyStats = &topgg.StatsUpdate{ServerCount: st.ServerCount, Shards: st.Shards, ShardID: st.ShardID}
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

// decodeLegacyStats checks a v0 stats body as Top.gg does; the error is its 400's.
func decodeLegacyStats(body []byte) (statsPost, error) {
	var raw struct {
		ServerCount json.RawMessage `json:"server_count"`
		Shards      json.RawMessage `json:"shards"`
		ShardID     json.RawMessage `json:"shard_id"`
		ShardCount  json.RawMessage `json:"shard_count"`
	}
	if err := decodeStrict(body, &raw); err != nil {
		return statsPost{}, fmt.Errorf("invalid body: %v", err)
	}
	var st statsPost
	var err error
	if st.ServerCount, st.Shards, err = legacyServerCount(raw.ServerCount); err != nil {
		return statsPost{}, err
	}
	if !isAbsent(raw.Shards) {
		if st.Shards != nil {
			return statsPost{}, errors.New("send shards either as server_count or as shards, not both")
		}
		if st.Shards, err = parseCountList(raw.Shards); err != nil {
			return statsPost{}, fmt.Errorf("shards: %v", err)
		}
	}
	if st.ShardID, err = optionalCount("shard_id", raw.ShardID); err != nil {
		return statsPost{}, err
	}
	if st.ShardCount, err = optionalCount("shard_count", raw.ShardCount); err != nil {
		return statsPost{}, err
	}
	if st.ShardID != nil && st.ShardCount != nil && *st.ShardID >= *st.ShardCount {
		return statsPost{}, errors.New("shard_id must be less than shard_count")
	}
	return st, nil
}

// legacyServerCount reads the required server_count: a count, or per-shard
// counts, returned as shards with their sum as total.
func legacyServerCount(raw json.RawMessage) (total int, shards []int, err error) {
	switch {
	case isAbsent(raw):
		return 0, nil, errors.New("server_count is required")
	case raw[0] == '[':
		list, err := parseCountList(raw)
		if err != nil {
			return 0, nil, fmt.Errorf("server_count: %v", err)
		}
		for _, n := range list {
			total += n
		}
		return total, list, nil
	default:
		n, err := parseCount(raw)
		if err != nil {
			return 0, nil, fmt.Errorf("server_count %v", err)
		}
		return n, nil, nil
	}
}

// optionalCount reads the count field name, nil when absent.
func optionalCount(name string, raw json.RawMessage) (*int, error) {
	if isAbsent(raw) {
		return nil, nil
	}
	n, err := parseCount(raw)
	if err != nil {
		return nil, fmt.Errorf("%s %v", name, err)
	}
	return &n, nil
}

func isAbsent(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

func parseCountList(raw json.RawMessage) ([]int, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, errors.New("must be an array of integers")
	}
	if len(items) == 0 {
		return nil, errors.New("must not be empty")
	}
	out := make([]int, len(items))
	for i, it := range items {
		n, err := parseCount(it)
		if err != nil {
			return nil, fmt.Errorf("[%d] %v", i, err)
		}
		out[i] = n
	}
	return out, nil
}
