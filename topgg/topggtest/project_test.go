package topggtest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
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

type votesPage struct {
	Cursor *string `json:"cursor"`
	Data   []struct {
		UserID     string `json:"user_id"`
		PlatformID string `json:"platform_id"`
		Weight     int    `json:"weight"`
		CreatedAt  string `json:"created_at"`
		ExpiresAt  string `json:"expires_at"`
	} `json:"data"`
}

func getVotes(t *testing.T, s *Server, q url.Values) votesPage {
	t.Helper()
	r := v1(t, s, http.MethodGet, "/projects/@me/votes?"+q.Encode(), nil)
	requireStatus(t, r, http.StatusOK)
	var p votesPage
	r.decode(t, &p)
	require.NotNil(t, p.Cursor, "cursor is always present")
	require.NotNil(t, p.Data, "data is an array, never null")
	return p
}

func since(t time.Time) url.Values {
	return url.Values{"startDate": {t.Format(time.RFC3339Nano)}}
}

func cursor(c string) url.Values { return url.Values{"cursor": {c}} }

func TestVotePagingFollowsCursor(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	for i := range 250 {
		s.AddVote(Vote{UserID: strconv.Itoa(i), PlatformID: "p" + strconv.Itoa(i), CreatedAt: t0.Add(-time.Duration(250-i) * time.Minute)})
	}

	p := getVotes(t, s, since(t0.Add(-24*time.Hour)))
	var seen []string
	sizes := []int{}
	for len(p.Data) > 0 {
		require.Less(t, len(sizes), 4, "the cursor does not advance")
		sizes = append(sizes, len(p.Data))
		for _, v := range p.Data {
			seen = append(seen, v.UserID)
		}
		p = getVotes(t, s, cursor(*p.Cursor))
	}
	require.Equal(t, []int{100, 100, 50}, sizes)
	require.Len(t, seen, 250)
	for i, id := range seen {
		require.Equal(t, strconv.Itoa(i), id, "oldest first across pages")
	}
	last := *p.Cursor
	require.NotEmpty(t, last)

	// An empty page repeats the same position.
	again := getVotes(t, s, cursor(last))
	require.Empty(t, again.Data)

	// Votes added after the end come with the last cursor.
	clock.Advance(time.Minute)
	s.AddVote(Vote{UserID: "late-1"})
	s.AddVote(Vote{UserID: "late-2"}) // same created_at: insertion order breaks the tie
	p = getVotes(t, s, cursor(*again.Cursor))
	require.Len(t, p.Data, 2)
	require.Equal(t, "late-1", p.Data[0].UserID)
	require.Equal(t, "late-2", p.Data[1].UserID)
	require.Empty(t, getVotes(t, s, cursor(*p.Cursor)).Data)
}

func TestVotePageSizeAndRecordShape(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now), WithPageSize(2))
	created := time.Date(2026, 1, 17, 23, 36, 6, 347320000, time.UTC)
	s.AddVote(
		Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 2, CreatedAt: created},
		Vote{UserID: "b", CreatedAt: created.Add(time.Second)},
		Vote{UserID: "c", CreatedAt: created.Add(2 * time.Second)},
	)
	r := v1(t, s, http.MethodGet, "/projects/@me/votes?startDate=2026-01-17T00:00:00Z", nil)
	requireStatus(t, r, http.StatusOK)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	var raw map[string]any
	r.decode(t, &raw)
	data := raw["data"].([]any)
	require.Len(t, data, 2)
	require.Equal(t, map[string]any{
		"user_id": "800506814562787328", "platform_id": "146183080879613966", "weight": float64(2),
		"created_at": "2026-01-17T23:36:06.34732Z", "expires_at": "2026-01-18T11:36:06.34732Z",
	}, data[0])
	require.Equal(t, float64(1), data[1].(map[string]any)["weight"], "default weight")
}

func TestVoteStartDate(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	s.AddVote(Vote{UserID: "old", CreatedAt: t0.Add(-2 * time.Hour)}, Vote{UserID: "at", CreatedAt: t0.Add(-time.Hour)}, Vote{UserID: "new"})

	p := getVotes(t, s, since(t0.Add(-time.Hour)))
	require.Len(t, p.Data, 2, "startDate is inclusive")
	require.Equal(t, "at", p.Data[0].UserID)

	yearAgo := t0.AddDate(-1, 0, 0)
	require.Len(t, getVotes(t, s, since(yearAgo.Add(time.Minute))).Data, 3)
	require.Len(t, getVotes(t, s, since(yearAgo)).Data, 3, "exactly one year back is allowed")
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?"+since(yearAgo.Add(-time.Minute)).Encode(), nil), http.StatusUnprocessableEntity)

	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes", nil), http.StatusBadRequest)
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?cursor=", nil), http.StatusBadRequest)
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?startDate=17.01.2026", nil), http.StatusBadRequest)
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?startDate=1700000000", nil), http.StatusBadRequest)

	// +00:00 offsets and 7 fractional digits parse like Z.
	p = getVotes(t, s, url.Values{"startDate": {"2026-01-17T22:36:06.3473200+00:00"}})
	require.Len(t, p.Data, 2)
}

func TestVoteCursorTakesPrecedence(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now), WithPageSize(1))
	s.AddVote(Vote{UserID: "a", CreatedAt: t0.Add(-2 * time.Minute)}, Vote{UserID: "b", CreatedAt: t0.Add(-time.Minute)})
	p := getVotes(t, s, since(t0.Add(-time.Hour)))
	require.Equal(t, "a", p.Data[0].UserID)
	q := cursor(*p.Cursor)
	q.Set("startDate", "not a date")
	p = getVotes(t, s, q)
	require.Equal(t, "b", p.Data[0].UserID)
}

func TestExpireCursors(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now), WithPageSize(1))
	s.AddVote(Vote{UserID: "a", CreatedAt: t0.Add(-2 * time.Minute)}, Vote{UserID: "b", CreatedAt: t0.Add(-time.Minute)})
	old := *getVotes(t, s, since(t0.Add(-time.Hour))).Cursor

	s.ExpireCursors()
	detail := requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?"+cursor(old).Encode(), nil), http.StatusBadRequest)
	require.Contains(t, detail, "cursor is invalid")

	// The fallback works and its cursors are good.
	p := getVotes(t, s, since(t0.Add(-90*time.Second)))
	require.Equal(t, "b", p.Data[0].UserID)
	require.Empty(t, getVotes(t, s, cursor(*p.Cursor)).Data)

	for _, bad := range []string{"garbage", "dGcxOjA6MTox", "!!!", "dGcxOjA6MToxOng"} {
		requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?"+cursor(bad).Encode(), nil), http.StatusBadRequest)
	}
}

func TestAddVoteConcurrentWithPaging(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now), WithPageSize(7))
	const n = 200
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			s.AddVote(Vote{UserID: strconv.Itoa(i), CreatedAt: t0.Add(time.Duration(i) * time.Millisecond)})
		}
	})
	seen := map[string]bool{}
	p := getVotes(t, s, since(t0))
	for range 10 * n {
		for _, v := range p.Data {
			require.False(t, seen[v.UserID], "vote %s served twice", v.UserID)
			seen[v.UserID] = true
		}
		if len(p.Data) == 0 && len(seen) == n {
			break
		}
		p = getVotes(t, s, cursor(*p.Cursor))
	}
	wg.Wait()
	require.Len(t, seen, n, "every vote served once")
	require.Len(t, s.Votes(), n)
}

func TestVoteStatus(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	s.AddVote(
		Vote{UserID: "u1", PlatformID: "d1", CreatedAt: t0.Add(-20 * time.Hour)},
		Vote{UserID: "u1", PlatformID: "d1", Weight: 2, CreatedAt: t0.Add(-time.Hour)},
		Vote{UserID: "u2", PlatformID: "d2", CreatedAt: t0.Add(-13 * time.Hour)},
	)
	type status struct {
		CreatedAt string `json:"created_at"`
		ExpiresAt string `json:"expires_at"`
		Weight    int    `json:"weight"`
	}
	want := status{
		CreatedAt: t0.Add(-time.Hour).Format(time.RFC3339Nano),
		ExpiresAt: t0.Add(11 * time.Hour).Format(time.RFC3339Nano),
		Weight:    2,
	}
	for _, path := range []string{"/projects/@me/votes/u1", "/projects/@me/votes/u1?source=topgg", "/projects/@me/votes/d1?source=discord"} {
		r := v1(t, s, http.MethodGet, path, nil)
		requireStatus(t, r, http.StatusOK)
		var got status
		r.decode(t, &got)
		require.Equal(t, want, got, path)
	}
	for _, path := range []string{"/projects/@me/votes/d1", "/projects/@me/votes/u1?source=discord", "/projects/@me/votes/u2", "/projects/@me/votes/nobody"} {
		requireProblem(t, v1(t, s, http.MethodGet, path, nil), http.StatusNotFound)
	}
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes/u1?source=native", nil), http.StatusBadRequest)

	// Expiry is exclusive: at expires_at the vote is no longer active.
	clock.Advance(11*time.Hour - time.Nanosecond)
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me/votes/u1", nil), http.StatusOK)
	clock.Advance(time.Nanosecond)
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes/u1", nil), http.StatusNotFound)
}

func TestAddVoteDefaults(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	s.AddVote(Vote{UserID: "a"})
	s.AddVote(Vote{UserID: "b", CreatedAt: t0.Add(-time.Hour), ExpiresAt: t0.Add(time.Hour), Weight: 2})
	s.AddVote(Vote{PlatformID: "205680187394752512"}, Vote{})
	// Each id a snowflake of its own: topggpy 2.0 reads int(user_id), int(platform_id).
	require.Equal(t, []Vote{
		{UserID: "b", PlatformID: "599000000000000002", Weight: 2, CreatedAt: t0.Add(-time.Hour), ExpiresAt: t0.Add(time.Hour)},
		{UserID: "a", PlatformID: "599000000000000001", Weight: 1, CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour)},
		{UserID: "799000000000000003", PlatformID: "205680187394752512", Weight: 1, CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour)},
		{UserID: "799000000000000004", PlatformID: "599000000000000004", Weight: 1, CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour)},
	}, s.Votes())
	page := getVotes(t, s, since(t0.Add(-time.Hour)))
	require.Len(t, page.Data, 4)
	for _, v := range page.Data {
		require.NotEmpty(t, v.UserID, "served with its ids")
		require.NotEmpty(t, v.PlatformID)
	}
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me/votes/799000000000000004", nil), http.StatusOK)
}

// TestVoteStartDateISOForms: startDate is ISO 8601, in the forms the official
// SDKs send: topggpy 2.0 get_votes(since) sends since.isoformat() (a naive
// datetime.now() has no offset and no fraction on a whole second), Node 4.0
// getVotes(since) sends toISOString() (3 digits, percent-encoded), Top.gg
// writes 7 digits, Go 9; a date alone is midnight UTC. The record keeps the
// value as sent.
func TestVoteStartDateISOForms(t *testing.T) {
	t.Parallel()
	clock := newClock() // 2026-01-17T23:36:06.34732Z
	s := newTestServer(t, WithNow(clock.Now))
	s.AddVote(Vote{UserID: "before", CreatedAt: t0.Add(-time.Hour - time.Microsecond)}, Vote{UserID: "at", CreatedAt: t0.Add(-time.Hour)})
	s.AddVote(Vote{UserID: "day before", CreatedAt: time.Date(2026, 1, 16, 23, 59, 59, 0, time.UTC)})

	for _, tc := range []struct{ name, rawQuery, first string }{
		{"python naive", "startDate=2026-01-17T22:36:06.347320", "at"},
		{"python naive, whole second", "startDate=2026-01-17T22:36:06", "before"},
		{"python aware", "startDate=2026-01-17T22%3A36%3A06.347320%2B00%3A00", "at"},
		{"python aware, other zone", "startDate=2026-01-17T23%3A36%3A06.347320%2B01%3A00", "at"},
		{"node toISOString", "startDate=2026-01-17T22%3A36%3A06.347Z", "before"},
		{"top.gg 7 digits", "startDate=2026-01-17T22:36:06.3473200%2B00:00", "at"},
		{"go 9 digits", "startDate=2026-01-17T22:36:06.347320000Z", "at"},
		{"offset without colon", "startDate=2026-01-17T22:36:06.34732%2B0000", "at"},
		{"date alone", "startDate=2026-01-17", "before"},
		{"date alone, day before", "startDate=2026-01-16", "day before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := v1(t, s, http.MethodGet, "/projects/@me/votes?"+tc.rawQuery, nil)
			requireStatus(t, r, http.StatusOK)
			var p votesPage
			r.decode(t, &p)
			require.NotEmpty(t, p.Data)
			require.Equal(t, tc.first, p.Data[0].UserID)
			reqs := s.Requests()
			want, err := url.ParseQuery(tc.rawQuery)
			require.NoError(t, err)
			require.Equal(t, want, reqs[len(reqs)-1].Query, "recorded as sent")
		})
	}
	for _, bad := range []string{"yesterday", "1700000000", "2026-01-17T25:00:00Z", "2026-01-17T22:36", "17/01/2026"} {
		requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes?"+url.Values{"startDate": {bad}}.Encode(), nil), http.StatusBadRequest)
	}
}
