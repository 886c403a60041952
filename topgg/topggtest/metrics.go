package topggtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"
)

// Batch rules, spec 4.1 and wire-values.md.
const (
	batchMax       = 100
	batchFutureMax = 5 * time.Minute
)

// MetricsRecord is one metrics payload the server accepted (PATCH or batch entry).
type MetricsRecord struct {
	Metrics map[string]int // e.g. {"server_count": 12}
	// Timestamp is the batch entry's, zero if it had none or for PATCH.
	Timestamp time.Time
	Batch     bool
}

// Metrics returns every accepted metrics payload in application order (in
// a batch, entries without a timestamp first, then by time).
func (s *Server) Metrics() []MetricsRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]MetricsRecord, len(s.metrics))
	for i, m := range s.metrics {
		m.Metrics = maps.Clone(m.Metrics)
		out[i] = m
	}
	return out
}

// metricFields are the fields each project kind accepts, by platform/type (spec 2.3).
var metricFields = map[string][]string{
	"discord/bot":    {"server_count", "shard_count"},
	"discord/server": {"member_count", "online_count"},
	"roblox/game":    {"player_count"},
}

// validateMetrics checks one payload against the project's kind.
func validateMetrics(p Project, raw json.RawMessage) (map[string]int, error) {
	fields, ok := metricFields[p.Platform+"/"+p.Type]
	if !ok {
		return nil, fmt.Errorf("metrics are not supported for a %s %s project", p.Platform, p.Type)
	}
	var obj map[string]*int
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, errors.New("metrics must be a JSON object of integers")
	}
	if len(obj) == 0 {
		return nil, errors.New("metrics must hold at least one field")
	}
	out := make(map[string]int, len(obj))
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		switch n := obj[k]; {
		case !slices.Contains(fields, k):
			return nil, fmt.Errorf("%s is not a metric of a %s %s project", k, p.Platform, p.Type)
		case n == nil || *n < 0:
			return nil, fmt.Errorf("%s must be an integer >= 0", k)
		}
		out[k] = *obj[k]
	}
	if _, ok := out["player_count"]; p.Type == "game" && !ok {
		return nil, errors.New("player_count is required")
	}
	if member, ok := out["member_count"]; ok && out["online_count"] > member {
		return nil, fmt.Errorf("online_count (%d) must not exceed member_count (%d)", out["online_count"], member)
	}
	return out, nil
}

func (s *Server) patchMetrics(c *call) {
	m, err := validateMetrics(s.cfg.project, c.body)
	if err != nil {
		writeProblem(c.w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	s.mu.Lock()
	s.metrics = append(s.metrics, MetricsRecord{Metrics: m})
	s.mu.Unlock()
	writeNoContent(c.w)
}

type batchEntry struct {
	index   int
	metrics json.RawMessage
	ts      time.Time // zero without timestamp
}

// postMetricsBatch decodes the whole body, then applies entries in the
// spec's order up to the first invalid one.
func (s *Server) postMetricsBatch(c *call) {
	entries, err := decodeBatch(c.body)
	if err != nil {
		writeProblem(c.w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	slices.SortStableFunc(entries, func(a, b batchEntry) int {
		switch {
		case a.ts.IsZero() == b.ts.IsZero():
			return a.ts.Compare(b.ts)
		case a.ts.IsZero():
			return -1
		}
		return 1
	})

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		if !e.ts.IsZero() && e.ts.After(c.now.Add(batchFutureMax)) {
			writeProblem(c.w, http.StatusUnprocessableEntity,
				fmt.Sprintf("data[%d].timestamp: more than 5 minutes in the future", e.index))
			return
		}
		m, err := validateMetrics(s.cfg.project, e.metrics)
		if err != nil {
			writeProblem(c.w, http.StatusUnprocessableEntity, fmt.Sprintf("data[%d].metrics: %v", e.index, err))
			return
		}
		s.metrics = append(s.metrics, MetricsRecord{Metrics: m, Timestamp: e.ts, Batch: true})
	}
	writeNoContent(c.w)
}

func decodeBatch(body []byte) ([]batchEntry, error) {
	var req struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return nil, fmt.Errorf("invalid body: %w", err)
	}
	if req.Data == nil {
		return nil, errors.New("data is required")
	}
	if n := len(req.Data); n < 1 || n > batchMax {
		return nil, fmt.Errorf("data must hold 1 to %d entries, got %d", batchMax, n)
	}
	entries := make([]batchEntry, len(req.Data))
	for i, raw := range req.Data {
		var e struct {
			Metrics   json.RawMessage `json:"metrics"`
			Timestamp *string         `json:"timestamp"`
		}
		if err := decodeStrict(raw, &e); err != nil {
			return nil, fmt.Errorf("data[%d]: %w", i, err)
		}
		if len(e.Metrics) == 0 || string(e.Metrics) == "null" {
			return nil, fmt.Errorf("data[%d].metrics is required", i)
		}
		entries[i] = batchEntry{index: i, metrics: e.Metrics}
		if e.Timestamp != nil {
			ts, err := parseISOTime(*e.Timestamp)
			if err != nil {
				return nil, fmt.Errorf("data[%d].timestamp: not an ISO 8601 timestamp", i)
			}
			if ts.IsZero() {
				return nil, fmt.Errorf("data[%d].timestamp: zero time", i)
			}
			entries[i].ts = ts
		}
	}
	return entries, nil
}
