package topggtest

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

func TestLegacyVoters(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	own := DiscordBot().PlatformID
	s.AddVote(
		Vote{UserID: "u1", PlatformID: "d1", CreatedAt: t0.Add(-3 * time.Hour)},
		Vote{UserID: "u2", PlatformID: "d2", Weight: 2, CreatedAt: t0.Add(-2 * time.Hour)},
		Vote{UserID: "u1", PlatformID: "d1", CreatedAt: t0.Add(-time.Hour)},
	)
	r := v0(t, s, http.MethodGet, "/bots/"+own+"/votes", nil)
	requireStatus(t, r, http.StatusOK)
	var voters []map[string]string
	r.decode(t, &voters)
	require.Len(t, voters, 2, "unique voters")
	require.Equal(t, "d1", voters[0]["id"], "most recent first")
	require.Equal(t, "d2", voters[1]["id"])
	for _, v := range voters {
		require.NotEmpty(t, v["username"])
		require.Len(t, v["avatar"], 32)
	}
}

func TestLegacyVotersCap(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	for i := range 1005 {
		s.AddVote(Vote{PlatformID: strconv.Itoa(i), CreatedAt: t0.Add(time.Duration(i) * time.Second)})
	}
	s.AddVote(Vote{PlatformID: "1004", CreatedAt: t0.Add(time.Hour)}) // a double vote
	r := v0(t, s, http.MethodGet, "/bots/"+DiscordBot().PlatformID+"/votes", nil)
	var voters []map[string]string
	r.decode(t, &voters)
	require.Len(t, voters, 1000)
	require.Equal(t, "1004", voters[0]["id"])
	require.Equal(t, "5", voters[999]["id"])
}

func TestLegacyOwnBotOnly(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.AddBot(Bot{ID: "42"}))
	for _, p := range []string{"/bots/42/votes", "/bots/42/check?userId=1"} {
		requireLegacyError(t, v0(t, s, http.MethodGet, p, nil), http.StatusForbidden)
	}
	requireLegacyError(t, v0(t, s, http.MethodPost, "/bots/42/stats", `{"server_count":1}`), http.StatusForbidden)
	for _, p := range []string{"/bots/7/votes", "/bots/7/check?userId=1", "/bots/7/stats"} {
		requireLegacyError(t, v0(t, s, http.MethodGet, p, nil), http.StatusNotFound)
	}
}

func TestLegacyCheck(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	own := DiscordBot().PlatformID
	s.AddVote(
		Vote{UserID: "u1", PlatformID: "d1", CreatedAt: t0.Add(-12*time.Hour + time.Second)},
		Vote{UserID: "u2", PlatformID: "d2", CreatedAt: t0.Add(-12 * time.Hour)},
	)
	check := func(user string) int {
		r := v0(t, s, http.MethodGet, "/bots/"+own+"/check?userId="+user, nil)
		requireStatus(t, r, http.StatusOK)
		var body map[string]int
		r.decode(t, &body)
		return body["voted"]
	}
	require.Equal(t, 1, check("d1"))
	require.Equal(t, 0, check("d2"), "exactly 12 hours ago is outside")
	require.Equal(t, 0, check("u1"), "v0 checks the Discord id")
	require.Equal(t, 0, check("nobody"))
	clock.Advance(time.Second)
	require.Equal(t, 0, check("d1"))
	requireLegacyError(t, v0(t, s, http.MethodGet, "/bots/"+own+"/check", nil), http.StatusBadRequest)
}

// TestLegacyVotesAndCheckOfTheToken: GET /bots/votes and /bots/check?userId=
// act on the token's bot, as @top-gg/sdk 3.1.6 getVotes and hasVoted call
// them (bare token) and topggpy 1.x get_user_vote does (Bearer).
func TestLegacyVotesAndCheckOfTheToken(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	s.AddVote(Vote{UserID: "u1", PlatformID: "205680187394752512", CreatedAt: t0.Add(-time.Hour)})

	r := sendAs(t, s, http.MethodGet, "/bots/votes", nodeSDK, s.Token(), "")
	requireStatus(t, r, http.StatusOK)
	var voters []map[string]string
	r.decode(t, &voters)
	require.Len(t, voters, 1)
	require.Equal(t, "205680187394752512", voters[0]["id"])

	check := func(header map[string]string, auth, user string) int {
		r := sendAs(t, s, http.MethodGet, "/bots/check?userId="+user, header, auth, "")
		requireStatus(t, r, http.StatusOK)
		var body map[string]int
		r.decode(t, &body)
		return body["voted"]
	}
	require.Equal(t, 1, check(nodeSDK, s.Token(), "205680187394752512"))
	require.Equal(t, 0, check(nodeSDK, s.Token(), "395526710101278721"))
	require.Equal(t, 1, check(pythonSDK, "Bearer "+s.Token(), "205680187394752512"))
	requireLegacyError(t, sendAs(t, s, http.MethodGet, "/bots/check", nodeSDK, s.Token(), ""), http.StatusBadRequest)

	for _, r := range s.Requests() {
		require.Contains(t, []string{"/bots/votes", "/bots/check"}, r.Path, "recorded as sent")
	}
}

// TestWeekend: GET /weekend, which @top-gg/sdk 3.1.6 isWeekend and topggpy
// get_weekend_status call, says whether it is Friday to Sunday (UTC) on the
// server clock; it needs the token and is outside the /bots limit.
func TestWeekend(t *testing.T) {
	t.Parallel()
	clock := newClock() // t0 is a Saturday
	s := newTestServer(t, WithNow(clock.Now), WithLegacyLimit(1, time.Hour))
	weekend := func() bool {
		r := sendAs(t, s, http.MethodGet, "/weekend", pythonSDK, "Bearer "+s.Token(), "")
		requireStatus(t, r, http.StatusOK)
		var body map[string]bool
		r.decode(t, &body)
		return body["is_weekend"]
	}
	at := func(d time.Time) { clock.Advance(d.Sub(clock.Now())) }
	require.True(t, weekend())
	at(time.Date(2026, 1, 19, 0, 0, 0, 0, time.UTC)) // Monday
	require.False(t, weekend())
	at(time.Date(2026, 1, 23, 0, 30, 0, 0, time.FixedZone("CET", 3600))) // Friday in CET, Thursday in UTC
	require.False(t, weekend())
	at(time.Date(2026, 1, 23, 0, 0, 0, 0, time.UTC)) // Friday
	require.True(t, weekend())
	at(time.Date(2026, 1, 25, 23, 59, 59, 0, time.UTC)) // Sunday
	require.True(t, weekend())
	requireStatus(t, sendAs(t, s, http.MethodGet, "/weekend", nodeSDK, s.Token(), ""), http.StatusOK)
	requireLegacyError(t, sendAs(t, s, http.MethodGet, "/weekend", nodeSDK, "wrong", ""), http.StatusUnauthorized)
}

type botsPage struct {
	Results []map[string]any `json:"results"`
	Limit   *int             `json:"limit"`
	Offset  *int             `json:"offset"`
	Count   *int             `json:"count"`
	Total   *int             `json:"total"`
}

func searchBots(t *testing.T, s *Server, query string) botsPage {
	t.Helper()
	r := v0(t, s, http.MethodGet, "/bots"+query, nil)
	requireStatus(t, r, http.StatusOK)
	var p botsPage
	r.decode(t, &p)
	require.NotNil(t, p.Limit)
	require.NotNil(t, p.Offset)
	require.NotNil(t, p.Count)
	require.NotNil(t, p.Total)
	require.Len(t, p.Results, *p.Count)
	return p
}

func ids(p botsPage) []string {
	var out []string
	for _, b := range p.Results {
		out = append(out, b["id"].(string))
	}
	return out
}

func TestOwnBotIsListed(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	p := DiscordBot()
	r := v0(t, s, http.MethodGet, "/bots/"+p.PlatformID, nil)
	requireStatus(t, r, http.StatusOK)
	var b map[string]any
	r.decode(t, &b)
	require.Equal(t, p.PlatformID, b["id"])
	require.Equal(t, p.PlatformID, b["clientid"])
	require.Equal(t, p.Name, b["username"])
	require.Equal(t, t0.Format(time.RFC3339Nano), b["date"])
	require.Equal(t, float64(p.VotesTotal), b["points"])
	require.Equal(t, float64(p.Votes), b["monthlyPoints"])
	for _, f := range []string{"avatar", "longdesc", "website", "support", "github", "invite", "vanity", "server_count", "shard_count"} {
		v, ok := b[f]
		require.True(t, ok, f)
		require.Nil(t, v, f)
	}
	for _, f := range []string{"discriminator", "defAvatar", "lib", "prefix", "shortdesc", "tags", "owners", "guilds", "certifiedBot", "donatebotguildid", "shards"} {
		require.Contains(t, b, f)
	}
	require.NotContains(t, b, "coderepo")
	require.NotContains(t, b, "donationbotguildid")

	requireLegacyError(t, v0(t, s, http.MethodGet, "/bots/1", nil), http.StatusNotFound)

	// A non-bot project has no bot of its own.
	other := newTestServer(t, WithProject(DiscordServer()))
	require.Zero(t, *searchBots(t, other, "").Total)
}

func TestAddBotAndFields(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.AddBot(Bot{ID: "42", Username: "other", GitHub: "https://github.com/x/y", DonateBotGuildID: "777", ServerCount: 5, CertifiedBot: true}))
	r := v0(t, s, http.MethodGet, "/bots/42?fields=id,github,donatebotguildid,server_count,certifiedBot,nope", nil)
	requireStatus(t, r, http.StatusOK)
	var b map[string]any
	r.decode(t, &b)
	require.Equal(t, map[string]any{
		"id": "42", "github": "https://github.com/x/y", "donatebotguildid": "777", "server_count": float64(5), "certifiedBot": true,
	}, b)

	require.NoError(t, s.AddBot(Bot{ID: "42", Username: "renamed"}))
	require.Len(t, s.directory(), 2, "same id replaces")
	require.Equal(t, "renamed", s.directory()[1].Username)
	require.Error(t, s.AddBot(Bot{}))
}

func TestSearchBots(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	own := DiscordBot().PlatformID // 264811613708746752, added at t0
	require.NoError(t, s.AddBot(Bot{ID: "99", MonthlyPoints: 50, Date: t0.Add(time.Hour)}))
	require.NoError(t, s.AddBot(Bot{ID: "1000000000000000000", MonthlyPoints: 7, Date: t0.Add(-time.Hour)}))

	p := searchBots(t, s, "")
	require.Equal(t, 50, *p.Limit)
	require.Equal(t, 0, *p.Offset)
	require.Equal(t, 3, *p.Total)
	require.Equal(t, []string{own, "99", "1000000000000000000"}, ids(p))

	require.Equal(t, []string{"99", own, "1000000000000000000"}, ids(searchBots(t, s, "?sort=id")), "ids sort as numbers")
	require.Equal(t, []string{"1000000000000000000", own, "99"}, ids(searchBots(t, s, "?sort=-id")))
	require.Equal(t, []string{"1000000000000000000", own, "99"}, ids(searchBots(t, s, "?sort=date")))
	require.Equal(t, []string{"99", own, "1000000000000000000"}, ids(searchBots(t, s, "?sort=-monthlyPoints")))

	p = searchBots(t, s, "?sort=id&limit=1&offset=1&fields=id,monthlyPoints")
	require.Equal(t, 1, *p.Count)
	require.Equal(t, 3, *p.Total)
	require.Equal(t, []map[string]any{{"id": own, "monthlyPoints": float64(DiscordBot().Votes)}}, p.Results)

	p = searchBots(t, s, "?offset=10")
	require.Zero(t, *p.Count)
	require.NotNil(t, p.Results)

	require.Equal(t, 500, *searchBots(t, s, "?limit=500").Limit)
	for _, q := range []string{"?limit=501", "?limit=-1", "?limit=ten", "?offset=-1", "?sort=username", "?sort=points"} {
		requireLegacyError(t, v0(t, s, http.MethodGet, "/bots"+q, nil), http.StatusBadRequest)
	}
}

func TestSearchBotsPagesManyBots(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for i := range 120 {
		require.NoError(t, s.AddBot(Bot{ID: strconv.Itoa(1000 + i)}))
	}
	p := searchBots(t, s, "?limit=100&offset=100&sort=id")
	require.Equal(t, 21, *p.Count)
	require.Equal(t, 121, *p.Total)
}

func TestLegacyRateLimit(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now), WithLegacyLimit(3, time.Minute))
	own := DiscordBot().PlatformID
	get := func() response { return v0(t, s, http.MethodGet, "/bots/"+own, nil) }

	requireStatus(t, get(), http.StatusOK)
	clock.Advance(20 * time.Second)
	requireStatus(t, get(), http.StatusOK)
	requireStatus(t, v0(t, s, http.MethodGet, "/bots/"+own+"/stats", nil), http.StatusOK)

	r := get()
	requireStatus(t, r, http.StatusTooManyRequests)
	require.Equal(t, "40", r.Header.Get("Retry-After"))
	require.JSONEq(t, `{"retry-after":40}`, string(r.Body))

	// v1 is not limited by the v0 window, and bad tokens are not counted.
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusOK)
	requireLegacyError(t, send(t, s, http.MethodGet, "/bots/"+own, "Bearer "+s.Token()+"x", nil), http.StatusUnauthorized)

	clock.Advance(40 * time.Second) // the first request leaves the window
	requireStatus(t, get(), http.StatusOK)
	r = get()
	requireStatus(t, r, http.StatusTooManyRequests)
	require.Equal(t, "20", r.Header.Get("Retry-After"))
}

func TestLegacyRateLimitDefaultAndDisabled(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	for range 60 {
		requireStatus(t, v0(t, s, http.MethodGet, "/bots?limit=1", nil), http.StatusOK)
	}
	requireStatus(t, v0(t, s, http.MethodGet, "/bots?limit=1", nil), http.StatusTooManyRequests)

	off := newTestServer(t, WithNow(clock.Now), WithLegacyLimit(0, time.Minute))
	for range 100 {
		requireStatus(t, v0(t, off, http.MethodGet, "/bots?limit=1", nil), http.StatusOK)
	}
}

func getStats(t *testing.T, s *Server, id string) map[string]any {
	t.Helper()
	r := v0(t, s, http.MethodGet, "/bots/"+id+"/stats", nil)
	requireStatus(t, r, http.StatusOK)
	var st map[string]any
	r.decode(t, &st)
	return st
}

func intp(n int) *int { return &n }

func TestLegacyStatsPostAndGet(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	own := DiscordBot().PlatformID
	_, ok := s.LegacyStats()
	require.False(t, ok)
	require.Equal(t, map[string]any{"shards": []any{}}, getStats(t, s, own), "never posted: counts absent, shards an array")

	post := func(body string) response { return v0(t, s, http.MethodPost, "/bots/"+own+"/stats", body) }

	r := post(`{"server_count":120}`)
	requireStatus(t, r, http.StatusOK)
	require.Empty(t, r.Body)
	st, ok := s.LegacyStats()
	require.True(t, ok)
	require.Equal(t, topgg.BotStats{ServerCount: 120}, st)
	require.Equal(t, map[string]any{"server_count": float64(120), "shards": []any{}}, getStats(t, s, own))

	requireStatus(t, post(`{"server_count":[10,20,30],"shard_count":3}`), http.StatusOK)
	st, _ = s.LegacyStats()
	require.Equal(t, topgg.BotStats{ServerCount: 60, Shards: []int{10, 20, 30}, ShardCount: 3}, st)
	require.Equal(t, map[string]any{"server_count": float64(60), "shards": []any{10.0, 20.0, 30.0}, "shard_count": float64(3)}, getStats(t, s, own))

	requireStatus(t, post(`{"server_count":25,"shard_id":1,"shard_count":3}`), http.StatusOK)
	st, _ = s.LegacyStats()
	require.Equal(t, topgg.BotStats{ServerCount: 25, ShardID: intp(1), ShardCount: 3}, st)
	require.Equal(t, map[string]any{"server_count": float64(65), "shards": []any{10.0, 25.0, 30.0}, "shard_count": float64(3)}, getStats(t, s, own))

	requireStatus(t, post(`{"server_count":7,"shards":[3,4]}`), http.StatusOK)
	require.Equal(t, map[string]any{"server_count": float64(7), "shards": []any{3.0, 4.0}, "shard_count": float64(3)}, getStats(t, s, own))

	for name, body := range map[string]string{
		"missing server_count": `{"shard_count":1}`,
		"null server_count":    `{"server_count":null}`,
		"negative":             `{"server_count":-1}`,
		"float":                `{"server_count":1.5}`,
		"string":               `{"server_count":"12"}`,
		"empty list":           `{"server_count":[]}`,
		"bad list":             `{"server_count":[1,"x"]}`,
		"shards not list":      `{"server_count":1,"shards":3}`,
		"both lists":           `{"server_count":[1],"shards":[1]}`,
		"shard_id too big":     `{"server_count":1,"shard_id":2,"shard_count":2}`,
		"unknown field":        `{"server_count":1,"guilds":3}`,
		"not json":             `server_count=1`,
	} {
		t.Run(name, func(t *testing.T) {
			requireLegacyError(t, post(body), http.StatusBadRequest)
		})
	}
	st, _ = s.LegacyStats()
	require.Equal(t, 7, st.ServerCount, "refused posts change nothing")

	// The directory entry shows the posted counts.
	r = v0(t, s, http.MethodGet, "/bots/"+own+"?fields=server_count,shard_count,shards", nil)
	var b map[string]any
	r.decode(t, &b)
	require.Equal(t, map[string]any{"server_count": float64(7), "shard_count": float64(3), "shards": []any{3.0, 4.0}}, b)
}

func TestLegacyStatsOfOtherBots(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.AddBot(Bot{ID: "42", ServerCount: 9, ShardCount: 1, Shards: []int{9}}))
	require.Equal(t, map[string]any{"server_count": float64(9), "shards": []any{9.0}, "shard_count": float64(1)}, getStats(t, s, "42"))
}

// TestLegacyStatsOfTheToken: POST and GET /bots/stats act on the token's
// bot, as every official v0 client calls them (@top-gg/sdk 3.1.6 postStats
// with the bare token; topggpy 1.x post_guild_count and get_guild_count with
// "Bearer"); the record keeps the path as sent.
func TestLegacyStatsOfTheToken(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	own := DiscordBot().PlatformID

	r := sendAs(t, s, http.MethodPost, "/bots/stats", nodeSDK, s.Token(), `{"server_count":28,"shard_id":1,"shard_count":2}`)
	requireStatus(t, r, http.StatusOK)
	st, ok := s.LegacyStats()
	require.True(t, ok)
	require.Equal(t, topgg.BotStats{ServerCount: 28, ShardID: intp(1), ShardCount: 2}, st)
	require.Equal(t, map[string]any{"server_count": float64(28), "shards": []any{0.0, 28.0}, "shard_count": float64(2)}, getStats(t, s, own))

	requireStatus(t, sendAs(t, s, http.MethodPost, "/bots/stats", pythonSDK, "Bearer "+s.Token(), `{"server_count": 30}`), http.StatusOK)
	r = sendAs(t, s, http.MethodGet, "/bots/stats", pythonSDK, "Bearer "+s.Token(), "")
	requireStatus(t, r, http.StatusOK)
	var got map[string]any
	r.decode(t, &got)
	require.Equal(t, map[string]any{"server_count": float64(30), "shards": []any{0.0, 28.0}, "shard_count": float64(2)}, got)

	reqs := s.Requests()
	require.Equal(t, "/bots/stats", reqs[0].Path)
	require.Equal(t, "/bots/stats", reqs[len(reqs)-1].Path)
	require.Equal(t, "Bearer "+s.Token(), reqs[len(reqs)-1].Header.Get("Authorization"))
}

// TestLegacyStatsOfTheTokenWithoutABot: a project that is not a Discord bot
// has no bot to post for.
func TestLegacyStatsOfTheTokenWithoutABot(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, WithProject(DiscordServer()))
	requireLegacyError(t, sendAs(t, s, http.MethodPost, "/bots/stats", nodeSDK, s.Token(), `{"server_count":28}`), http.StatusNotFound)
	requireLegacyError(t, sendAs(t, s, http.MethodGet, "/bots/stats", pythonSDK, "Bearer "+s.Token(), ""), http.StatusNotFound)
	_, ok := s.LegacyStats()
	require.False(t, ok)
}
