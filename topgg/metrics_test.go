package topgg_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

func TestUpdateMetrics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		project topggtest.Project
		metrics topgg.Metrics
		body    string
		stored  map[string]int
	}{
		{"bot", topggtest.DiscordBot(), topgg.BotMetrics{ServerCount: new(1200), ShardCount: new(2)},
			`{"server_count":1200,"shard_count":2}`, map[string]int{"server_count": 1200, "shard_count": 2}},
		{"bot servers only", topggtest.DiscordBot(), topgg.BotMetrics{ServerCount: new(0)},
			`{"server_count":0}`, map[string]int{"server_count": 0}},
		{"bot by pointer", topggtest.DiscordBot(), &topgg.BotMetrics{ShardCount: new(4)},
			`{"shard_count":4}`, map[string]int{"shard_count": 4}},
		{"server", topggtest.DiscordServer(), topgg.ServerMetrics{MemberCount: new(500), OnlineCount: new(500)},
			`{"member_count":500,"online_count":500}`, map[string]int{"member_count": 500, "online_count": 500}},
		{"server online only", topggtest.DiscordServer(), topgg.ServerMetrics{OnlineCount: new(7)},
			`{"online_count":7}`, map[string]int{"online_count": 7}},
		{"game", topggtest.RobloxGame(), topgg.GameMetrics{PlayerCount: 0},
			`{"player_count":0}`, map[string]int{"player_count": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, topggtest.WithProject(tc.project))
			c := newClient(t, srv)
			_, err := c.Project(t.Context()) // learn the kind: the payload must still pass
			require.NoError(t, err)

			require.NoError(t, c.UpdateMetrics(t.Context(), tc.metrics))

			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			requireV1(t, srv, reqs[1], "PATCH", "/v1/projects/@me/metrics")
			require.JSONEq(t, tc.body, string(reqs[1].Body))
			got := srv.Metrics()
			require.Len(t, got, 1)
			require.Equal(t, tc.stored, got[0].Metrics)
			require.False(t, got[0].Batch)
		})
	}
}

func TestPostMetricsBatch(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	t1 := ago(2 * time.Hour).Add(123400 * time.Nanosecond) // precision to 100 ns survives
	t2 := ago(time.Hour)

	samples := []topgg.MetricsSample{
		{Timestamp: t2, Metrics: topgg.BotMetrics{ServerCount: new(20)}},
		{Metrics: topgg.BotMetrics{ServerCount: new(30), ShardCount: new(1)}},
		{Timestamp: t1.In(time.FixedZone("CET", 3600)), Metrics: topgg.BotMetrics{ServerCount: new(10)}},
	}
	require.NoError(t, c.PostMetricsBatch(t.Context(), samples))

	r := onlyRequest(t, srv)
	requireV1(t, srv, r, "POST", "/v1/projects/@me/metrics/batch")
	want := fmt.Sprintf(`{"data":[
		{"metrics":{"server_count":20},"timestamp":%q},
		{"metrics":{"server_count":30,"shard_count":1}},
		{"metrics":{"server_count":10},"timestamp":%q}]}`,
		t2.Format(sentTime), t1.UTC().Format(sentTime))
	require.JSONEq(t, want, string(r.Body))

	// Applied as the service orders them: untimed first, then by time.
	got := srv.Metrics()
	require.Len(t, got, 3)
	require.Equal(t, map[string]int{"server_count": 30, "shard_count": 1}, got[0].Metrics)
	require.True(t, got[0].Timestamp.IsZero())
	require.Equal(t, map[string]int{"server_count": 10}, got[1].Metrics)
	require.True(t, got[1].Timestamp.Equal(t1), "%s != %s", got[1].Timestamp, t1)
	require.Equal(t, map[string]int{"server_count": 20}, got[2].Metrics)
	require.True(t, got[2].Timestamp.Equal(t2))
	for _, m := range got {
		require.True(t, m.Batch)
	}
}

func TestMetricsSampleJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(topgg.BatchEntries([]topgg.MetricsSample{{Metrics: topgg.GameMetrics{PlayerCount: 3}}})[0])
	require.NoError(t, err)
	require.JSONEq(t, `{"metrics":{"player_count":3}}`, string(b))
}

// TestPostMetricsBatchTimestampsAtMostSevenDigits: a timestamp with
// nanoseconds goes out with 7 fractional digits (Top.gg's own precision), in
// UTC; one on a whole second with none.
func TestPostMetricsBatchTimestampsAtMostSevenDigits(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	base := ago(time.Hour).Truncate(time.Second)
	nano := base.Add(123456789).In(time.FixedZone("CET", 3600))
	require.NoError(t, c.PostMetricsBatch(t.Context(), []topgg.MetricsSample{
		{Timestamp: nano, Metrics: topgg.BotMetrics{ServerCount: new(1)}},
		{Timestamp: base, Metrics: topgg.BotMetrics{ServerCount: new(2)}},
	}))

	var body struct {
		Data []struct {
			Timestamp string `json:"timestamp"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(onlyRequest(t, srv).Body, &body))
	require.Len(t, body.Data, 2)
	require.Equal(t, base.Add(123456700).Format("2006-01-02T15:04:05.0000000Z"), body.Data[0].Timestamp)
	require.Equal(t, base.Format("2006-01-02T15:04:05Z"), body.Data[1].Timestamp)
	for _, d := range body.Data {
		require.Regexp(t, sentTimeRE, d.Timestamp)
	}
}
