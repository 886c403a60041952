package topggtest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPatchMetricsByProjectKind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		project Project
		ok      map[string]string // body -> ""
		bad     []string
	}{
		{DiscordBot(), map[string]string{
			`{"server_count":0}`:                    "",
			`{"shard_count":2}`:                     "",
			`{"server_count":1200,"shard_count":2}`: "",
		}, []string{
			`{}`, `{"server_count":-1}`, `{"server_count":1.5}`, `{"server_count":1e3}`, `{"server_count":"12"}`,
			`{"server_count":null}`, `{"member_count":5}`, `{"player_count":5}`, `{"server_count":1,"guilds":2}`,
			`[]`, `12`, `null`, ``, `{"server_count":99999999999999999999}`,
		}},
		{DiscordServer(), map[string]string{
			`{"member_count":10}`:                   "",
			`{"online_count":3}`:                    "",
			`{"member_count":10,"online_count":10}`: "",
		}, []string{
			`{}`, `{"member_count":10,"online_count":11}`, `{"server_count":1}`, `{"online_count":-1}`,
		}},
		{RobloxGame(), map[string]string{
			`{"player_count":0}`:   "",
			`{"player_count":420}`: "",
		}, []string{
			`{}`, `{"player_count":-1}`, `{"server_count":1}`, `{"player_count":1,"visits":3}`,
		}},
		{Project{ID: "9", Platform: "minecraft", Type: "game_server"}, nil, []string{`{"player_count":1}`, `{"server_count":1}`}},
	}
	for _, c := range cases {
		t.Run(c.project.Platform+"/"+c.project.Type, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, WithProject(c.project))
			for body := range c.ok {
				r := v1(t, s, http.MethodPatch, "/projects/@me/metrics", body)
				requireStatus(t, r, http.StatusNoContent)
				require.Empty(t, r.Body)
			}
			for _, body := range c.bad {
				requireProblem(t, v1(t, s, http.MethodPatch, "/projects/@me/metrics", body), http.StatusUnprocessableEntity)
			}
			require.Len(t, s.Metrics(), len(c.ok))
		})
	}
}

func TestPatchMetricsRecord(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	requireStatus(t, v1(t, s, http.MethodPatch, "/projects/@me/metrics", `{"server_count":12,"shard_count":1}`), http.StatusNoContent)
	require.Equal(t, []MetricsRecord{{
		Metrics:    map[string]int{"server_count": 12, "shard_count": 1},
		ReceivedAt: t0,
	}}, s.Metrics())
}

func batchOf(n int) map[string]any {
	data := make([]map[string]any, n)
	for i := range data {
		data[i] = map[string]any{"metrics": map[string]int{"server_count": i}}
	}
	return map[string]any{"data": data}
}

func TestBatchSize(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", batchOf(0)), 422)
	requireStatus(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", batchOf(1)), http.StatusNoContent)
	requireStatus(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", batchOf(100)), http.StatusNoContent)
	require.Contains(t, requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", batchOf(101)), 422), "101")
	require.Len(t, s.Metrics(), 101)
	for _, m := range s.Metrics() {
		require.True(t, m.Batch)
	}
}

func TestBatchShape(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for name, body := range map[string]string{
		"bare array":        `[{"metrics":{"server_count":1}}]`,
		"no data":           `{}`,
		"null data":         `{"data":null}`,
		"missing metrics":   `{"data":[{"timestamp":"2026-01-17T23:00:00Z"}]}`,
		"null entry":        `{"data":[null]}`,
		"unknown member":    `{"data":[{"metrics":{"server_count":1},"at":"x"}]}`,
		"bad timestamp":     `{"data":[{"metrics":{"server_count":1},"timestamp":"yesterday"}]}`,
		"date only":         `{"data":[{"metrics":{"server_count":1},"timestamp":"2026-01-17"}]}`,
		"bad entry metrics": `{"data":[{"metrics":{"member_count":1}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", body), 422)
		})
	}
	require.Empty(t, s.Metrics())
}

func TestBatchOrderingAndPartialFailure(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	ts := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	body := fmt.Sprintf(`{"data":[
		{"metrics":{"server_count":3},"timestamp":%q},
		{"metrics":{"server_count":10}},
		{"metrics":{"server_count":1},"timestamp":%q},
		{"metrics":{"server_count":11},"timestamp":null},
		{"metrics":{"server_count":2},"timestamp":%q}
	]}`, ts(-time.Minute), ts(-3*time.Minute), ts(-2*time.Minute))
	requireStatus(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", body), http.StatusNoContent)
	var got []int
	var stamps []time.Time
	for _, m := range s.Metrics() {
		got = append(got, m.Metrics["server_count"])
		stamps = append(stamps, m.Timestamp)
		require.Equal(t, t0, m.ReceivedAt)
	}
	require.Equal(t, []int{10, 11, 1, 2, 3}, got)
	require.True(t, stamps[0].IsZero())
	require.True(t, stamps[1].IsZero())
	require.True(t, t0.Add(-3*time.Minute).Equal(stamps[2]))

	// The third entry in application order fails: the two before it stay.
	body = fmt.Sprintf(`{"data":[
		{"metrics":{"server_count":-5},"timestamp":%q},
		{"metrics":{"server_count":20}},
		{"metrics":{"server_count":21},"timestamp":%q},
		{"metrics":{"server_count":22},"timestamp":%q}
	]}`, ts(time.Second), ts(-time.Hour), ts(2*time.Second))
	detail := requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", body), 422)
	require.Contains(t, detail, "data[0]")
	got = got[:0]
	for _, m := range s.Metrics()[5:] {
		got = append(got, m.Metrics["server_count"])
	}
	require.Equal(t, []int{20, 21}, got)
}

func TestBatchFutureTimestamps(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	entry := func(d time.Duration) string {
		return fmt.Sprintf(`{"data":[{"metrics":{"server_count":1},"timestamp":%q}]}`, t0.Add(d).Format(time.RFC3339Nano))
	}
	requireStatus(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", entry(5*time.Minute)), http.StatusNoContent)
	detail := requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", entry(5*time.Minute+time.Second)), 422)
	require.Contains(t, detail, "future")
	// Offsets other than Z are the same instant.
	plus := t0.Add(4 * time.Minute).In(time.FixedZone("", 2*3600)).Format(time.RFC3339)
	requireStatus(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch",
		`{"data":[{"metrics":{"server_count":2},"timestamp":"`+plus+`"}]}`), http.StatusNoContent)
	require.Len(t, s.Metrics(), 2)
	require.True(t, strings.HasSuffix(plus, "+02:00"))
}
