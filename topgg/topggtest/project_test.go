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

func TestGetProject(t *testing.T) {
	t.Parallel()
	for _, p := range []Project{DiscordBot(), DiscordServer(), RobloxGame(), {Project: topgg.Project{ID: "1", Platform: "minecraft", Type: "game_server"}}} {
		s := newTestServer(t, WithProject(p))
		r := v1(t, s, http.MethodGet, "/projects/@me", nil)
		requireStatus(t, r, http.StatusOK)
		require.Equal(t, "application/json", r.Header.Get("Content-Type"))
		var got map[string]any
		r.decode(t, &got)
		tags := []any{}
		for _, tag := range p.Tags {
			tags = append(tags, tag)
		}
		require.Equal(t, map[string]any{
			"id": p.ID, "name": p.Name, "platform": string(p.Platform), "type": string(p.Type), "headline": p.Headline,
			"tags": tags, "votes": float64(p.Votes), "votes_total": float64(p.VotesTotal),
			"review_score": p.ReviewScore, "review_count": float64(p.ReviewCount),
		}, got)
	}
}

func TestProjectConstructors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p              Project
		platform, kind string
	}{{DiscordBot(), "discord", "bot"}, {DiscordServer(), "discord", "server"}, {RobloxGame(), "roblox", "game"}} {
		require.Equal(t, c.platform, string(c.p.Platform))
		require.Equal(t, c.kind, string(c.p.Type))
		require.NotEmpty(t, c.p.ID)
		require.NotEmpty(t, c.p.PlatformID)
		require.NotEqual(t, c.p.ID, c.p.PlatformID)
	}
	require.Equal(t, DiscordBot(), newTestServer(t).Project(), "default project")
}

func TestPatchProjectHeadlineLengthInRunes(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, c := range []struct {
		text string
		want int
	}{
		{"éé", http.StatusUnprocessableEntity},                     // 2 runes, 4 bytes
		{"ééé", http.StatusNoContent},                              // 3 runes
		{strings.Repeat("日", 140), http.StatusNoContent},           // 140 runes, 420 bytes
		{strings.Repeat("日", 141), http.StatusUnprocessableEntity}, // 141 runes
		{strings.Repeat("a", 140), http.StatusNoContent},
	} {
		r := v1(t, s, http.MethodPatch, "/projects/@me", map[string]any{"headline": map[string]string{"en": c.text}})
		if c.want == http.StatusNoContent {
			requireStatus(t, r, c.want)
			require.Empty(t, r.Body)
		} else {
			require.Contains(t, requireProblem(t, r, c.want), "headline.en")
		}
	}
}

func TestPatchProjectPageContentLengthInRunes(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, c := range []struct {
		n    int
		want int
	}{{299, 422}, {300, 204}, {50000, 204}, {50001, 422}} {
		r := v1(t, s, http.MethodPatch, "/projects/@me", map[string]any{"page_content": map[string]string{"de": strings.Repeat("ü", c.n)}})
		requireStatus(t, r, c.want)
	}
}

func TestPatchProjectRules(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	long := strings.Repeat("x", 300)
	for name, body := range map[string]string{
		"empty object":        `{}`,
		"empty maps":          `{"headline":{},"page_content":{}}`,
		"null members":        `{"headline":null}`,
		"unknown locale":      `{"headline":{"xx":"hello"}}`,
		"region locale":       `{"headline":{"en-US":"hello"}}`,
		"content not a field": `{"content":{"en":"` + long + `"}}`,
		"non-string value":    `{"headline":{"en":5}}`,
		"not an object":       `["en"]`,
		"trailing data":       `{"headline":{"en":"hello"}} {}`,
		"one bad locale":      `{"headline":{"en":"hello","fr":"no"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			requireProblem(t, v1(t, s, http.MethodPatch, "/projects/@me", body), http.StatusUnprocessableEntity)
		})
	}
	require.Empty(t, s.ProjectUpdates().Headline, "a refused PATCH changes nothing")

	for _, loc := range supportedLocales {
		requireStatus(t, v1(t, s, http.MethodPatch, "/projects/@me", map[string]any{"headline": map[string]string{loc: "hello " + string(loc)}}), http.StatusNoContent)
	}
	requireStatus(t, v1(t, s, http.MethodPatch, "/projects/@me", map[string]any{
		"headline":     map[string]string{"en": "hello again"},
		"page_content": map[string]string{"fr": long},
	}), http.StatusNoContent)

	up := s.ProjectUpdates()
	require.Len(t, up.Headline, 16)
	require.Equal(t, "hello again", up.Headline["en"])
	require.Equal(t, "hello de", up.Headline["de"])
	require.Equal(t, map[string]string{"fr": long}, up.PageContent)
}

func announce(title, content string) map[string]string {
	return map[string]string{"title": title, "content": content}
}

func TestAnnouncementLengths(t *testing.T) {
	t.Parallel()
	okTitle, okContent := "Hey", strings.Repeat("ü", 10)
	for _, c := range []struct {
		name           string
		title, content string
		want           int
	}{
		{"title 2", "日本", okContent, 422},
		{"title 3", "日本語", okContent, 200},
		{"title 100", strings.Repeat("é", 100), okContent, 200},
		{"title 101", strings.Repeat("é", 101), okContent, 422},
		{"content 9", okTitle, strings.Repeat("ü", 9), 422},
		{"content 10", okTitle, strings.Repeat("ü", 10), 200},
		{"content 2000", okTitle, strings.Repeat("ü", 2000), 200},
		{"content 2001", okTitle, strings.Repeat("ü", 2001), 422},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t) // one each: the cooldown would refuse a second success
			r := v1(t, s, http.MethodPost, "/projects/@me/announcements", announce(c.title, c.content))
			if c.want == 422 {
				requireProblem(t, r, 422)
				require.Empty(t, s.Announcements())
				return
			}
			requireStatus(t, r, c.want)
			require.Len(t, s.Announcements(), 1)
		})
	}
}

func TestAnnouncementShape(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for name, body := range map[string]string{
		"missing title":    `{"content":"0123456789"}`,
		"missing content":  `{"title":"abc"}`,
		"bad category":     `{"title":"abc","content":"0123456789","category":"news"}`,
		"unknown member":   `{"title":"abc","content":"0123456789","description":"x"}`,
		"title not string": `{"title":123,"content":"0123456789"}`,
		"empty":            ``,
	} {
		t.Run(name, func(t *testing.T) {
			requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/announcements", body), 422)
		})
	}
	require.Empty(t, s.Announcements())
}

func TestAnnouncementCategoriesAndResponse(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	for _, cat := range []string{"", "announcement", "event", "new_feature"} {
		body := map[string]string{"title": "News", "content": "Something happened."}
		want := "announcement"
		if cat != "" {
			body["category"] = cat
			want = cat
		}
		r := v1(t, s, http.MethodPost, "/projects/@me/announcements", body)
		requireStatus(t, r, http.StatusOK)
		var got map[string]string
		r.decode(t, &got)
		require.Equal(t, map[string]string{
			"title": "News", "content": "Something happened.", "category": want,
			"created_at": clock.Now().Format(time.RFC3339Nano),
		}, got)
		clock.Advance(4 * time.Hour)
	}
	list := s.Announcements()
	require.Len(t, list, 4)
	require.Equal(t, "new_feature", list[3].Category)
	require.Equal(t, t0.Add(12*time.Hour), list[3].CreatedAt)
}

func TestAnnouncementCooldown(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	post := func() response {
		return v1(t, s, http.MethodPost, "/projects/@me/announcements", announce("News", "Something happened."))
	}
	requireStatus(t, post(), http.StatusOK)

	clock.Advance(time.Hour)
	r := post()
	requireProblem(t, r, http.StatusTooManyRequests)
	require.Equal(t, "10800", r.Header.Get("Retry-After"))
	var body struct {
		RetryAfter int `json:"retry-after"`
	}
	r.decode(t, &body)
	require.Equal(t, 10800, body.RetryAfter)

	// A refused request is validated first and starts nothing.
	requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/announcements", announce("x", "y")), 422)

	clock.Advance(3*time.Hour - 1500*time.Millisecond)
	r = post()
	requireProblem(t, r, http.StatusTooManyRequests)
	require.Equal(t, "2", r.Header.Get("Retry-After"), "1.5 s rounds up")

	clock.Advance(1500 * time.Millisecond) // exactly 4 h after the first
	requireStatus(t, post(), http.StatusOK)
	requireProblem(t, post(), http.StatusTooManyRequests)
	require.Len(t, s.Announcements(), 2)
}

func TestPutCommands(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	_, ok := s.Commands()
	require.False(t, ok)

	body := `[{"name":"vote","description":"Vote for the bot","type":1},{"name":"Report","type":3}]`
	r := v1(t, s, http.MethodPut, "/projects/@me/commands", body)
	requireStatus(t, r, http.StatusNoContent)
	require.Empty(t, r.Body)
	got, ok := s.Commands()
	require.True(t, ok)
	require.Equal(t, body, string(got))

	for name, bad := range map[string]string{
		"object":         `{"name":"vote"}`,
		"null":           `null`,
		"empty body":     ``,
		"missing name":   `[{"description":"x"}]`,
		"empty name":     `[{"name":""}]`,
		"name not text":  `[{"name":5}]`,
		"item not obj":   `["vote"]`,
		"one bad of two": `[{"name":"ok"},{"description":"x"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			requireProblem(t, v1(t, s, http.MethodPut, "/projects/@me/commands", bad), http.StatusUnprocessableEntity)
		})
	}
	got, _ = s.Commands()
	require.Equal(t, body, string(got), "refused bodies change nothing")

	requireStatus(t, v1(t, s, http.MethodPut, "/projects/@me/commands", `[]`), http.StatusNoContent)
	got, ok = s.Commands()
	require.True(t, ok)
	require.Equal(t, "[]", string(got))
}

func TestPutCommandsOnlyForDiscordBots(t *testing.T) {
	t.Parallel()
	for _, p := range []Project{DiscordServer(), RobloxGame()} {
		s := newTestServer(t, WithProject(p))
		requireProblem(t, v1(t, s, http.MethodPut, "/projects/@me/commands", `[{"name":"vote"}]`), http.StatusForbidden)
		_, ok := s.Commands()
		require.False(t, ok)
	}
}

// TestPostCommands: POST /v1/projects/@me/commands, which both official v1
// SDKs send (Node 4.0 postCommands, topggpy 2.0 post_commands), sets the
// commands as PUT does; the record keeps the method as sent.
func TestPostCommands(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	body := `[{"options":[],"name":"test","name_localizations":null,"description":"command description","description_localizations":null,"contexts":[],"default_permission":null,"default_member_permissions":null,"dm_permission":false,"integration_types":[],"nsfw":false}]`
	requireStatus(t, v1(t, s, http.MethodPost, "/projects/@me/commands", body), http.StatusNoContent)
	got, ok := s.Commands()
	require.True(t, ok)
	require.Equal(t, body, string(got))
	require.Equal(t, http.MethodPost, s.Requests()[0].Method)
	requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/commands", `[{"description":"x"}]`), http.StatusUnprocessableEntity)
}

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
