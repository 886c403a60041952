package topggtest

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

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
	five := 5
	require.NoError(t, s.AddBot(Bot{ID: "42", Username: "other", GitHub: "https://github.com/x/y", DonateBotGuildID: "777", ServerCount: &five, CertifiedBot: true}))
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
