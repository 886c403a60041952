package topggtest

import (
	"net/http"
	"strings"
	"testing"

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
		requireStatus(t, v1(t, s, http.MethodPatch, "/projects/@me", map[string]any{"headline": map[topgg.Locale]string{loc: "hello " + string(loc)}}), http.StatusNoContent)
	}
	requireStatus(t, v1(t, s, http.MethodPatch, "/projects/@me", map[string]any{
		"headline":     map[string]string{"en": "hello again"},
		"page_content": map[string]string{"fr": long},
	}), http.StatusNoContent)

	up := s.ProjectUpdates()
	require.Len(t, up.Headline, 16)
	require.Equal(t, "hello again", up.Headline["en"])
	require.Equal(t, "hello de", up.Headline["de"])
	require.Equal(t, map[topgg.Locale]string{"fr": long}, up.PageContent)
}
