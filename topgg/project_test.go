package topgg_test

import (
	"encoding/json"
	"testing"

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
