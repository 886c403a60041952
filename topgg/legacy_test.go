package topgg_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// otherBots lists three more bots beside the project's own.
func otherBots(t *testing.T, srv *topggtest.Server) {
	date := time.Date(2020, 5, 1, 12, 0, 0, 0, time.UTC)
	for i, b := range []topggtest.Bot{
		{ID: "100000000000000001", Username: "alpha", MonthlyPoints: 5, GitHub: "https://github.com/a/alpha", DonateBotGuildID: "200000000000000001"},
		{ID: "100000000000000002", Username: "beta", MonthlyPoints: 500, Avatar: "a_1234", ServerCount: new(77), ShardCount: new(1), Shards: []int{77}},
		{ID: "100000000000000003", Username: "gamma", MonthlyPoints: 50, CertifiedBot: true, Vanity: "gamma"},
	} {
		b.Date = date.AddDate(0, 0, i)
		require.NoError(t, srv.AddBot(b))
	}
}

func TestSearchBots(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	otherBots(t, srv)
	l := newClient(t, srv).Legacy()

	list, err := l.SearchBots(t.Context(), topgg.BotQuery{Limit: 2, Offset: 1, Sort: "-monthlyPoints", Fields: []string{"id", "username", "monthlyPoints"}})
	require.NoError(t, err)
	// By monthlyPoints descending: beta 500, gamma 50, own 42, alpha 5; skip one, take two.
	require.Equal(t, &topgg.BotList{
		Results: []topgg.Bot{
			{ID: "100000000000000003", Username: "gamma", MonthlyPoints: 50},
			{ID: srv.Project().PlatformID, Username: srv.Project().Name, MonthlyPoints: srv.Project().Votes},
		},
		Limit: 2, Offset: 1, Count: 2, Total: 4,
	}, list)

	r := onlyRequest(t, srv)
	requireV0(t, srv, r, "GET", "/bots")
	require.Equal(t, "2", r.Query.Get("limit"))
	require.Equal(t, "1", r.Query.Get("offset"))
	require.Equal(t, "-monthlyPoints", r.Query.Get("sort"))
	require.Equal(t, "id,username,monthlyPoints", r.Query.Get("fields"))
	require.Empty(t, r.Body)
}

func TestSearchBotsDefaults(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	otherBots(t, srv)
	l := newClient(t, srv).Legacy()

	list, err := l.SearchBots(t.Context(), topgg.BotQuery{Sort: "id"})
	require.NoError(t, err)
	require.Equal(t, 50, list.Limit)
	require.Equal(t, 4, list.Count)
	require.Len(t, list.Results, 4)
	require.Equal(t, "100000000000000001", list.Results[0].ID)
	require.Equal(t, "https://github.com/a/alpha", list.Results[0].GitHub)
	require.Equal(t, "200000000000000001", list.Results[0].DonateBotGuildID)
	require.Equal(t, url0(t, srv), "sort=id")
}

func url0(t *testing.T, srv *topggtest.Server) string {
	t.Helper()
	return onlyRequest(t, srv).Query.Encode()
}

func TestBot(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	otherBots(t, srv)
	l := newClient(t, srv).Legacy()

	b, err := l.Bot(t.Context(), "100000000000000002")
	require.NoError(t, err)
	require.Equal(t, &topgg.Bot{
		ID: "100000000000000002", ClientID: "100000000000000002", Username: "beta", Avatar: "a_1234",
		Tags: []string{}, Owners: []string{}, Guilds: []string{},
		Date: time.Date(2020, 5, 2, 12, 0, 0, 0, time.UTC), ServerCount: 77, ShardCount: 1, Shards: []int{77}, MonthlyPoints: 500,
	}, b)
	r := onlyRequest(t, srv)
	requireV0(t, srv, r, "GET", "/bots/100000000000000002")
	require.Empty(t, r.Query)
}

func TestBotFields(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	otherBots(t, srv)
	l := newClient(t, srv).Legacy()

	b, err := l.Bot(t.Context(), "100000000000000003", "username", "certifiedBot", "vanity")
	require.NoError(t, err)
	require.Equal(t, &topgg.Bot{Username: "gamma", CertifiedBot: true, Vanity: "gamma"}, b)
	r := onlyRequest(t, srv)
	requireV0(t, srv, r, "GET", "/bots/100000000000000003")
	require.Equal(t, "username,certifiedBot,vanity", r.Query.Get("fields"))
}

func TestBotNotListed(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	l := newClient(t, srv).Legacy()

	_, err := l.Bot(t.Context(), "999999999999999999")
	require.ErrorIs(t, err, topgg.ErrNotFound)
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 404, apiErr.StatusCode)
	require.Equal(t, "Not found", apiErr.Detail)
	require.Len(t, srv.Requests(), 1, "a 404 is not retried")
}

func TestVoters(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	l := newClient(t, srv).Legacy()
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", CreatedAt: ago(2 * time.Hour)})
	srv.AddVote(topggtest.Vote{UserID: "800506814562787329", PlatformID: "146183080879613967", CreatedAt: ago(time.Hour)})
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", CreatedAt: ago(time.Minute)})

	bot := srv.Project().PlatformID
	voters, err := l.Voters(t.Context(), bot)
	require.NoError(t, err)
	require.Len(t, voters, 2, "unique voters")
	require.Equal(t, "146183080879613966", voters[0].ID)
	require.Equal(t, "146183080879613967", voters[1].ID)
	for _, v := range voters {
		require.NotEmpty(t, v.Username)
		require.NotEmpty(t, v.Avatar)
	}
	requireV0(t, srv, onlyRequest(t, srv), "GET", "/bots/"+bot+"/votes")
}

func TestPostStatsAndStats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		update    topgg.BotStats
		body      string
		stored    topggtest.LegacyStats
		wantStats topgg.BotStats
	}{
		{
			name:      "total",
			update:    topgg.BotStats{ServerCount: 1200},
			body:      `{"server_count":1200}`,
			stored:    topggtest.LegacyStats{ServerCount: 1200},
			wantStats: topgg.BotStats{ServerCount: 1200, Shards: []int{}},
		},
		{
			name:      "per-shard list",
			update:    topgg.BotStats{ServerCount: 30, Shards: []int{10, 20}, ShardCount: 2},
			body:      `{"server_count":30,"shards":[10,20],"shard_count":2}`,
			stored:    topggtest.LegacyStats{ServerCount: 30, Shards: []int{10, 20}, ShardCount: new(2)},
			wantStats: topgg.BotStats{ServerCount: 30, Shards: []int{10, 20}, ShardCount: 2},
		},
		{
			name:      "one shard",
			update:    topgg.BotStats{ServerCount: 5, ShardID: new(1), ShardCount: 2},
			body:      `{"server_count":5,"shard_id":1,"shard_count":2}`,
			stored:    topggtest.LegacyStats{ServerCount: 5, ShardID: new(1), ShardCount: new(2)},
			wantStats: topgg.BotStats{ServerCount: 5, Shards: []int{0, 5}, ShardCount: 2},
		},
		{
			name:      "shard zero",
			update:    topgg.BotStats{ServerCount: 9, ShardID: new(0)},
			body:      `{"server_count":9,"shard_id":0}`,
			stored:    topggtest.LegacyStats{ServerCount: 9, ShardID: new(0)},
			wantStats: topgg.BotStats{ServerCount: 9, Shards: []int{9}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			l := newClient(t, srv).Legacy()
			bot := srv.Project().PlatformID

			require.NoError(t, l.PostStats(t.Context(), bot, tc.update))
			r := onlyRequest(t, srv)
			requireV0(t, srv, r, "POST", "/bots/"+bot+"/stats")
			require.JSONEq(t, tc.body, string(r.Body))
			got, ok := srv.LegacyStats()
			require.True(t, ok)
			require.Equal(t, tc.stored, got)

			st, err := l.Stats(t.Context(), bot)
			require.NoError(t, err)
			require.Equal(t, &tc.wantStats, st)
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			requireV0(t, srv, reqs[1], "GET", "/bots/"+bot+"/stats")
		})
	}
}

func TestStatsNeverPosted(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	l := newClient(t, srv).Legacy()
	st, err := l.Stats(t.Context(), srv.Project().PlatformID)
	require.NoError(t, err)
	require.Equal(t, &topgg.BotStats{Shards: []int{}}, st)
}

func TestHasVoted(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	l := newClient(t, srv).Legacy()
	bot := srv.Project().PlatformID
	srv.AddVote(topggtest.Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", CreatedAt: ago(time.Hour)})
	srv.AddVote(topggtest.Vote{UserID: "800506814562787329", PlatformID: "146183080879613967", CreatedAt: ago(13 * time.Hour)})

	for user, want := range map[string]bool{"146183080879613966": true, "146183080879613967": false, "111111111111111111": false} {
		n := len(srv.Requests())
		voted, err := l.HasVoted(t.Context(), bot, user)
		require.NoError(t, err)
		require.Equal(t, want, voted, user)
		r := srv.Requests()[n]
		requireV0(t, srv, r, "GET", "/bots/"+bot+"/check")
		require.Equal(t, []string{user}, r.Query["userId"])
	}
}

func TestHasVotedAcceptsBooleans(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	l := newClient(t, srv).Legacy()
	bot := srv.Project().PlatformID
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/bots/*", Status: 200, Body: `{"voted":true}`}))
	voted, err := l.HasVoted(t.Context(), bot, "146183080879613966")
	require.NoError(t, err)
	require.True(t, voted)

	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/bots/*", Status: 200, Body: `{"voted":2}`}))
	_, err = l.HasVoted(t.Context(), bot, "146183080879613966")
	var de *topgg.DecodeError
	require.ErrorAs(t, err, &de)
}

func TestBotJSONNulls(t *testing.T) {
	t.Parallel()
	var b topgg.Bot
	require.NoError(t, json.Unmarshal([]byte(`{"id":"1","avatar":null,"longdesc":null,"server_count":null,"date":"2017-04-26T18:08:17.125+00:00","shards":null}`), &b))
	require.Equal(t, "1", b.ID)
	require.Empty(t, b.Avatar)
	require.Zero(t, b.ServerCount)
	require.True(t, b.Date.Equal(time.Date(2017, 4, 26, 18, 8, 17, 125e6, time.UTC)))
}
