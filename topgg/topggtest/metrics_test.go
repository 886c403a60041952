package topggtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
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
		{Project{Project: topgg.Project{ID: "9", Platform: "minecraft", Type: "game_server"}}, nil, []string{`{"player_count":1}`, `{"server_count":1}`}},
	}
	for _, c := range cases {
		t.Run(string(c.project.Platform)+"/"+string(c.project.Type), func(t *testing.T) {
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
	require.Equal(t, []MetricsRecord{{Metrics: map[string]int{"server_count": 12, "shard_count": 1}}}, s.Metrics())
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
		"not a date":        `{"data":[{"metrics":{"server_count":1},"timestamp":"2026-13-17"}]}`,
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

// TestBatchTimestampISOForms: a batch entry's timestamp is ISO 8601 in the
// forms the official SDKs send (Node 4.0 passes the caller's string through,
// e.g. toISOString(); topggpy 2.0 sends isoformat(), naive or aware), read
// as UTC when it has no offset.
func TestBatchTimestampISOForms(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	forms := map[string]time.Time{
		"2026-01-17T23:30:00.123Z":         time.Date(2026, 1, 17, 23, 30, 0, 123000000, time.UTC),
		"2026-01-17T23:31:00.123456":       time.Date(2026, 1, 17, 23, 31, 0, 123456000, time.UTC),
		"2026-01-17T23:32:00":              time.Date(2026, 1, 17, 23, 32, 0, 0, time.UTC),
		"2026-01-18T00:33:00.123456+01:00": time.Date(2026, 1, 17, 23, 33, 0, 123456000, time.UTC),
		"2026-01-17T23:34:00.1234567+0000": time.Date(2026, 1, 17, 23, 34, 0, 123456700, time.UTC),
		"2026-01-17T23:35:00.123456789Z":   time.Date(2026, 1, 17, 23, 35, 0, 123456789, time.UTC),
		"2026-01-17":                       time.Date(2026, 1, 17, 0, 0, 0, 0, time.UTC),
	}
	var data []map[string]any
	for ts := range forms {
		data = append(data, map[string]any{"timestamp": ts, "metrics": map[string]int{"server_count": 1}})
	}
	requireStatus(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", map[string]any{"data": data}), http.StatusNoContent)
	got := s.Metrics()
	require.Len(t, got, len(forms))
	var want []time.Time
	for _, w := range forms {
		want = append(want, w)
	}
	slices.SortFunc(want, time.Time.Compare)
	for i, m := range got {
		require.True(t, want[i].Equal(m.Timestamp), "%d: %s != %s", i, want[i], m.Timestamp)
	}
	requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch",
		`{"data":[{"metrics":{"server_count":1},"timestamp":"2026-01-17T23:46:06.347320"}]}`), http.StatusUnprocessableEntity)
}
