package topggtest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

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
	require.Equal(t, LegacyStats{ServerCount: 120}, st)
	require.Equal(t, map[string]any{"server_count": float64(120), "shards": []any{}}, getStats(t, s, own))

	requireStatus(t, post(`{"server_count":[10,20,30],"shard_count":3}`), http.StatusOK)
	st, _ = s.LegacyStats()
	require.Equal(t, LegacyStats{ServerCount: 60, Shards: []int{10, 20, 30}, ShardCount: intp(3)}, st)
	require.Equal(t, map[string]any{"server_count": float64(60), "shards": []any{10.0, 20.0, 30.0}, "shard_count": float64(3)}, getStats(t, s, own))

	requireStatus(t, post(`{"server_count":25,"shard_id":1,"shard_count":3}`), http.StatusOK)
	st, _ = s.LegacyStats()
	require.Equal(t, LegacyStats{ServerCount: 25, ShardID: intp(1), ShardCount: intp(3)}, st)
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
	require.NoError(t, s.AddBot(Bot{ID: "42", ServerCount: intp(9), ShardCount: intp(1), Shards: []int{9}}))
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
	require.Equal(t, LegacyStats{ServerCount: 28, ShardID: intp(1), ShardCount: intp(2)}, st)
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
