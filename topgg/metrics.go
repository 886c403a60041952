package topgg

import (
	"context"
	"time"
)

// Metrics is a metrics payload for one kind of project: [BotMetrics],
// [ServerMetrics] or [GameMetrics], and no other.
type Metrics interface {
	kind() projectKind
	validate(field string) error
}

// BotMetrics are the metrics of a Discord bot (ShardCount: all its shards).
// At least one field must be set.
type BotMetrics struct {
	ServerCount *int `json:"server_count,omitempty"`
	ShardCount  *int `json:"shard_count,omitempty"`
}

// ServerMetrics are the metrics of a Discord server. At least one field must be set;
// OnlineCount may not exceed MemberCount when both are.
type ServerMetrics struct {
	MemberCount *int `json:"member_count,omitempty"`
	OnlineCount *int `json:"online_count,omitempty"`
}

// GameMetrics are the metrics of a Roblox game.
type GameMetrics struct {
	PlayerCount int `json:"player_count"`
}

func (BotMetrics) kind() projectKind    { return discordBot }
func (ServerMetrics) kind() projectKind { return discordServer }
func (GameMetrics) kind() projectKind   { return robloxGame }

// UpdateMetrics sets the project's live metrics; after [Client.Project], a
// payload of another kind fails validation.
func (c *Client) UpdateMetrics(ctx context.Context, m Metrics) error {
	if err := c.checkMetrics("metrics", m); err != nil {
		return err
	}
	_, err := c.do(ctx, &call{route: routeMetrics, body: m, idempotent: true, family: "v1:metrics", tokenOnly400: true}, nil)
	return err
}

// MaxBatch is the largest number of entries of one metrics batch.
const MaxBatch = 100

// MetricsSample is one entry of a metrics batch: the metrics and, optionally,
// when they applied (zero: applied first, in order; at most 5 minutes ahead).
type MetricsSample struct {
	Timestamp time.Time
	Metrics   Metrics
}

// batchEntry is a MetricsSample as the service's batch takes it.
type batchEntry struct {
	Metrics   Metrics `json:"metrics"`
	Timestamp string  `json:"timestamp,omitempty"`
}

func batchEntries(samples []MetricsSample) []batchEntry {
	data := make([]batchEntry, len(samples))
	for i, s := range samples {
		data[i].Metrics = s.Metrics
		if !s.Timestamp.IsZero() {
			data[i].Timestamp = wireTime(s.Timestamp)
		}
	}
	return data
}

// PostMetricsBatch sends 1 to [MaxBatch] samples at once; the same batch twice
// sets the same values, so it is retried like an idempotent call.
func (c *Client) PostMetricsBatch(ctx context.Context, samples []MetricsSample) error {
	if err := c.checkBatch(samples, time.Now()); err != nil {
		return err
	}
	body := struct {
		Data []batchEntry `json:"data"`
	}{batchEntries(samples)}
	_, err := c.do(ctx, &call{route: routeMetricsBatch, body: body, idempotent: true, family: "v1:metrics", tokenOnly400: true}, nil)
	return err
}
