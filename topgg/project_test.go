package topgg_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

func TestProject(t *testing.T) {
	t.Parallel()
	for _, want := range []topggtest.Project{topggtest.DiscordBot(), topggtest.DiscordServer(), topggtest.RobloxGame()} {
		t.Run(want.Type, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, topggtest.WithProject(want))
			c := newClient(t, srv)

			p, err := c.Project(t.Context())
			require.NoError(t, err)
			require.Equal(t, &topgg.Project{
				ID: want.ID, Name: want.Name, Platform: want.Platform, Type: want.Type,
				Headline: want.Headline, Tags: want.Tags, Votes: want.Votes, VotesTotal: want.VotesTotal,
				ReviewScore: want.ReviewScore, ReviewCount: want.ReviewCount,
			}, p)
			require.Equal(t, want.Platform == "discord" && want.Type == "bot", p.IsDiscordBot())

			r := onlyRequest(t, srv)
			requireV1(t, srv, r, "GET", "/v1/projects/@me")
			require.Empty(t, r.Body)
			require.Empty(t, r.Query)
		})
	}
}

func TestProjectUnknownKindDecodes(t *testing.T) {
	t.Parallel()
	odd := topggtest.DiscordBot()
	odd.Platform, odd.Type = "minecraft", "game_server"
	srv := newServer(t, topggtest.WithProject(odd))
	c := newClient(t, srv)

	p, err := c.Project(t.Context())
	require.NoError(t, err)
	require.Equal(t, "minecraft", p.Platform)
	require.Equal(t, "game_server", p.Type)
	require.False(t, p.IsDiscordBot())
}

func TestUpdateProject(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)

	page := runes("Ein ausführlicher Text über den Bot. ", 10)
	u := topgg.ProjectUpdate{
		Headline:    map[string]string{"en": "The best bot", "ja": "最高のボット"},
		PageContent: map[string]string{"de": page},
	}
	require.NoError(t, c.UpdateProject(t.Context(), u))

	r := onlyRequest(t, srv)
	requireV1(t, srv, r, "PATCH", "/v1/projects/@me")
	want, err := json.Marshal(map[string]map[string]string{
		"headline":     {"en": "The best bot", "ja": "最高のボット"},
		"page_content": {"de": page},
	})
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(r.Body))

	got := srv.ProjectUpdates()
	require.Equal(t, map[string]string{"en": "The best bot", "ja": "最高のボット"}, got.Headline)
	require.Equal(t, map[string]string{"de": page}, got.PageContent)
}

func TestUpdateProjectOneMember(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)

	require.NoError(t, c.UpdateProject(t.Context(), topgg.ProjectUpdate{Headline: map[string]string{"fr": "Le meilleur"}}))
	require.JSONEq(t, `{"headline":{"fr":"Le meilleur"}}`, string(onlyRequest(t, srv).Body))
}

func TestLocales(t *testing.T) {
	t.Parallel()
	all := []string{"en", "de", "fr", "pt", "tr", "hi", "ja", "ar", "nl", "ko", "it", "es", "ru", "uk", "vi", "zh"}
	for _, l := range all {
		require.NoError(t, topgg.Validate(topgg.ProjectUpdate{Headline: map[string]string{l: "A headline"}}), l)
	}
	for _, l := range []string{"", "EN", "en-US", "xx", "pl", "zh-TW"} {
		require.Error(t, topgg.Validate(topgg.ProjectUpdate{Headline: map[string]string{l: "A headline"}}), l)
	}
}

func TestSetCommands(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	defs := []json.RawMessage{
		json.RawMessage(`{"name":"vote","description":"Vote for the bot","type":1}`),
		json.RawMessage(`{"name":"Report","type":3}`),
	}

	require.NoError(t, c.SetCommands(t.Context(), defs))

	r := onlyRequest(t, srv)
	requireV1(t, srv, r, "PUT", "/v1/projects/@me/commands")
	want := `[{"name":"vote","description":"Vote for the bot","type":1},{"name":"Report","type":3}]`
	require.JSONEq(t, want, string(r.Body))
	got, ok := srv.Commands()
	require.True(t, ok)
	require.JSONEq(t, want, string(got))
}

func TestSetCommandsNilClears(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)

	require.NoError(t, c.SetCommands(t.Context(), nil))
	require.Equal(t, "[]", string(onlyRequest(t, srv).Body))
	got, ok := srv.Commands()
	require.True(t, ok)
	require.JSONEq(t, `[]`, string(got))
}

func TestSetCommandsNotABot(t *testing.T) {
	t.Parallel()
	srv := newServer(t, topggtest.WithProject(topggtest.DiscordServer()))
	c := newClient(t, srv)
	defs := []json.RawMessage{json.RawMessage(`{"name":"vote","description":"Vote"}`)}

	// Before Project() the client cannot know: the service refuses.
	err := c.SetCommands(t.Context(), defs)
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 403, apiErr.StatusCode)
	require.NotErrorIs(t, err, topgg.ErrUnauthorized)

	_, err = c.Project(t.Context())
	require.NoError(t, err)
	n := len(srv.Requests())
	requireInvalid(t, c.SetCommands(t.Context(), defs), "commands")
	require.Len(t, srv.Requests(), n)
}

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

func TestPostAnnouncement(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		category string
		wantBody string
		wantCat  string
	}{
		{"default", "", `{"title":"v2 is out","content":"Slash commands everywhere."}`, "announcement"},
		{"event", "event", `{"title":"v2 is out","content":"Slash commands everywhere.","category":"event"}`, "event"},
		{"new_feature", "new_feature", `{"title":"v2 is out","content":"Slash commands everywhere.","category":"new_feature"}`, "new_feature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := newClient(t, srv)
			before := time.Now()

			a, err := c.PostAnnouncement(t.Context(), topgg.NewAnnouncement{Title: "v2 is out", Content: "Slash commands everywhere.", Category: tc.category})
			require.NoError(t, err)
			require.Equal(t, "v2 is out", a.Title)
			require.Equal(t, "Slash commands everywhere.", a.Content)
			require.Equal(t, tc.wantCat, a.Category)
			require.WithinRange(t, a.CreatedAt, before.Add(-time.Second), time.Now().Add(time.Second))

			r := onlyRequest(t, srv)
			requireV1(t, srv, r, "POST", "/v1/projects/@me/announcements")
			require.JSONEq(t, tc.wantBody, string(r.Body))
			got := srv.Announcements()
			require.Len(t, got, 1)
			require.Equal(t, string(tc.wantCat), got[0].Category)
		})
	}
}

func TestPostAnnouncementCooldownIsLocal(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	a := topgg.NewAnnouncement{Title: "Hello", Content: "First announcement."}

	_, err := c.PostAnnouncement(t.Context(), a)
	require.NoError(t, err)

	_, err = c.PostAnnouncement(t.Context(), a)
	require.ErrorIs(t, err, topgg.ErrRateLimited)
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local)
	require.Nil(t, rl.API)
	require.InDelta(t, announcementCooldown.Seconds(), rl.RetryAfter.Seconds(), 60)
	require.Len(t, srv.Requests(), 1, "the second announcement must not be sent")

	// The block is the announcements' own: other v1 calls still go out.
	_, err = c.Project(t.Context())
	require.NoError(t, err)
}

func TestPostAnnouncementServerCooldown(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := topgg.NewAnnouncement{Title: "Hello", Content: "First announcement."}

	// Another client (another process) posted first: the service's 429 teaches
	// this one the remaining cooldown.
	_, err := newClient(t, srv).PostAnnouncement(t.Context(), a)
	require.NoError(t, err)
	c := newClient(t, srv)
	_, err = c.PostAnnouncement(t.Context(), a)
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.False(t, rl.Local)
	require.NotNil(t, rl.API)
	require.Equal(t, 429, rl.API.StatusCode)
	require.InDelta(t, (4 * time.Hour).Seconds(), rl.RetryAfter.Seconds(), 60)
	require.Len(t, srv.Requests(), 2)

	_, err = c.PostAnnouncement(t.Context(), a)
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local)
	require.Len(t, srv.Requests(), 2)
}

// TestPostAnnouncementBrokenReply: a 2xx whose body breaks off still means the
// announcement was posted, so the cooldown starts and no second POST goes out.
func TestPostAnnouncementBrokenReply(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := http.NewResponseController(w).Hijack()
		if !assert.NoError(t, err) {
			return
		}
		defer conn.Close()
		// Promise 1,000 bytes, send a few, hang up.
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"title\":\"Hel")
		_ = buf.Flush()
	}))
	t.Cleanup(ts.Close)
	c, err := topgg.New("s3cr3t-value", topgg.WithBaseURL(ts.URL), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	a := topgg.NewAnnouncement{Title: "Hello", Content: "First announcement."}

	_, err = c.PostAnnouncement(t.Context(), a)
	var de *topgg.DecodeError
	require.ErrorAs(t, err, &de)
	require.Equal(t, 200, de.Status)
	require.Contains(t, err.Error(), "posted")
	require.Contains(t, err.Error(), "unreadable")
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "the cause stays reachable")
	require.NotContains(t, err.Error(), "s3cr3t")
	require.EqualValues(t, 1, posts.Load())

	_, err = c.PostAnnouncement(t.Context(), a)
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local)
	require.InDelta(t, announcementCooldown.Seconds(), rl.RetryAfter.Seconds(), 60)
	require.EqualValues(t, 1, posts.Load(), "the second announcement must not be sent")
}

// announcementCooldown is the service's limit of one announcement per 4 hours.
const announcementCooldown = 4 * time.Hour
