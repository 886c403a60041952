package topgg

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Metrics is a metrics payload for one kind of project: [BotMetrics], [ServerMetrics]
// or [GameMetrics]. The set is closed: the service accepts no other shape.
type Metrics interface {
	// Validate checks the payload against the service's rules.
	Validate() error
	kind() projectKind
	validate(field string) error
}

// BotMetrics are the metrics of a Discord bot. At least one field must be set.
type BotMetrics struct {
	ServerCount *int `json:"server_count,omitempty"`
	// ShardCount is the bot's total number of shards.
	ShardCount *int `json:"shard_count,omitempty"`
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

func (BotMetrics) kind() projectKind    { return projectKind{PlatformDiscord, ProjectTypeBot} }
func (ServerMetrics) kind() projectKind { return projectKind{PlatformDiscord, ProjectTypeServer} }
func (GameMetrics) kind() projectKind   { return projectKind{PlatformRoblox, ProjectTypeGame} }

// UpdateMetrics sets the project's live metrics (PATCH /v1/projects/@me/metrics).
// When the client knows the project's kind (after [Client.Project]), a payload of
// another kind fails validation without a request.
func (c *Client) UpdateMetrics(ctx context.Context, m Metrics) error {
	if err := c.checkMetrics("metrics", m); err != nil {
		return err
	}
	_, err := c.do(ctx, &call{method: http.MethodPatch, path: c.project.v1Path("/metrics"), body: m, idempotent: true, family: "v1:metrics", route: RouteMetrics, tokenOnly400: true}, nil)
	return err
}

// MaxBatch is the largest number of entries of one metrics batch.
const MaxBatch = 100

// MetricsSample is one entry of a metrics batch: the metrics and, optionally, the
// moment they apply to.
type MetricsSample struct {
	// Timestamp is when the metrics applied; zero sends none (applied first, in order).
	// It may not be more than 5 minutes in the future.
	Timestamp time.Time
	Metrics   Metrics
}

// MarshalJSON encodes the sample as the service's batch entry.
func (s MetricsSample) MarshalJSON() ([]byte, error) {
	e := struct {
		Metrics   Metrics    `json:"metrics"`
		Timestamp *time.Time `json:"timestamp,omitempty"`
	}{Metrics: s.Metrics}
	if !s.Timestamp.IsZero() {
		t := s.Timestamp.UTC()
		e.Timestamp = &t
	}
	return json.Marshal(e)
}

// PostMetricsBatch sends 1 to [MaxBatch] samples at once (POST /v1/projects/@me/metrics/batch).
// The service applies entries without timestamp first, in order, then the others by
// ascending timestamp, and stops at the first invalid entry. Sending the same batch
// twice sets the same values, so the call is retried like an idempotent one.
func (c *Client) PostMetricsBatch(ctx context.Context, samples []MetricsSample) error {
	if err := c.checkBatch(samples, time.Now()); err != nil {
		return err
	}
	body := struct {
		Data []MetricsSample `json:"data"`
	}{samples}
	_, err := c.do(ctx, &call{method: http.MethodPost, path: c.project.v1Path("/metrics/batch"), body: body, idempotent: true, family: "v1:metrics", route: RouteMetricsBatch, tokenOnly400: true}, nil)
	return err
}
