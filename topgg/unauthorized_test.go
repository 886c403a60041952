package topgg_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// routes are every call of the client, with the path a fault must match and
// whether the route's only documented 400 is an invalid project token.
var routes = []struct {
	name, method, path string
	tokenOnly400       bool
	call               func(context.Context, *topgg.Client) error
}{
	{"project", "GET", "/v1/projects/@me", true, func(ctx context.Context, c *topgg.Client) error {
		_, err := c.Project(ctx)
		return err
	}},
	{"update project", "PATCH", "/v1/projects/@me", true, headline("A new headline")},
	{"announcement", "POST", "/v1/projects/@me/announcements", true, func(ctx context.Context, c *topgg.Client) error {
		_, err := c.PostAnnouncement(ctx, topgg.NewAnnouncement{Title: "Hello", Content: "An announcement."})
		return err
	}},
	{"metrics", "PATCH", "/v1/projects/@me/metrics", true, metrics(topgg.BotMetrics{ServerCount: new(3)})},
	{"batch", "POST", "/v1/projects/@me/metrics/batch", true, batch(2, nil)},
	{"commands", "PUT", "/v1/projects/@me/commands", false, commands(`{"name":"vote","description":"Vote"}`)},
	{"votes", "GET", "/v1/projects/@me/votes", false, votesFrom(ago(time.Hour))},
	{"vote status", "GET", "/v1/projects/@me/votes/123", false, voteStatus("123", "")},
	{"v0 search", "GET", "/bots", false, legacy(func(ctx context.Context, l *topgg.Legacy) error {
		_, err := l.SearchBots(ctx, topgg.BotQuery{})
		return err
	})},
	{"v0 post stats", "POST", "/bots/264811613708746752/stats", false, legacy(func(ctx context.Context, l *topgg.Legacy) error {
		return l.PostStats(ctx, "264811613708746752", topgg.BotStats{ServerCount: 5})
	})},
	{"v0 check", "GET", "/bots/264811613708746752/check", false, legacy(func(ctx context.Context, l *topgg.Legacy) error {
		_, err := l.HasVoted(ctx, "264811613708746752", "1")
		return err
	})},
}

// TestErrUnauthorizedByStatusAndRoute: a 401 is unauthorized on every route; a
// 400 only on the v1 routes whose one documented 400 is an invalid token, and
// there whatever the body says (an empty one, one that never mentions a token).
func TestErrUnauthorizedByStatusAndRoute(t *testing.T) {
	t.Parallel()
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := newClient(t, srv)
			require.NoError(t, srv.Inject(topggtest.Fault{Method: rt.method, Path: rt.path, Status: 401, Body: `{"detail":"nothing about credentials"}`}))
			err := rt.call(t.Context(), c)
			require.ErrorIs(t, err, topgg.ErrUnauthorized)
			require.False(t, topgg.Retryable(err))

			for _, body := range []string{``, `{"title":"Bad Request","status":400,"detail":"Invalid token"}`, `{"error":"bad value"}`} {
				require.NoError(t, srv.Inject(topggtest.Fault{Method: rt.method, Path: rt.path, Status: 400, Body: body}))
				err = rt.call(t.Context(), c)
				var apiErr *topgg.APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, 400, apiErr.StatusCode)
				require.Equal(t, rt.tokenOnly400, apiErr.Is(topgg.ErrUnauthorized), "body %q", body)
			}
		})
	}
}

// TestErrUnauthorizedFromTheFake: a token of another project, refused by the
// fake as the spec says (400 on the five routes that document it, 401
// elsewhere), is ErrUnauthorized on every route, in one attempt.
func TestErrUnauthorizedFromTheFake(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c, err := topgg.New(topggtest.ProjectToken("1"), topgg.WithBaseURL(srv.URL), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	for _, rt := range routes {
		before := len(srv.Requests())
		err := rt.call(t.Context(), c)
		require.ErrorIs(t, err, topgg.ErrUnauthorized, rt.name)
		var apiErr *topgg.APIError
		require.ErrorAs(t, err, &apiErr)
		want := http.StatusUnauthorized
		if rt.tokenOnly400 {
			want = http.StatusBadRequest
		}
		require.Equal(t, want, apiErr.StatusCode, rt.name)
		require.Len(t, srv.Requests(), before+1, "%s: not retried", rt.name)
	}
}

// legacyToken is a token of the v0 era: its payload has "bot": true and no "_t".
func legacyToken() string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"id":"264811613708746752","bot":true,"iat":1577836800}`)) + ".bGVnYWN5LXNpZ25hdHVyZQ"
}

// TestLegacyTokenHint: a v1 refusal of a legacy token says so, without quoting it;
// a refused project token, a v0 refusal and other failures carry no hint.
func TestLegacyTokenHint(t *testing.T) {
	t.Parallel()
	srv := newServer(t) // accepts its own project token only
	tok := legacyToken()
	c, err := topgg.New(tok, topgg.WithBaseURL(srv.URL), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)

	_, err = c.Project(t.Context()) // 400 from the server, as the spec says
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.ErrorIs(t, err, topgg.ErrUnauthorized)
	require.Contains(t, apiErr.Hint, "legacy v0")
	require.Contains(t, err.Error(), "hint: the token looks like a legacy v0 bot token")

	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/metrics", Status: 400}))
	err = c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(1)})
	require.ErrorAs(t, err, &apiErr)
	require.NotEmpty(t, apiErr.Hint, "the 400 of a bad token on v1 gets the hint too")

	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 400, Body: `{"detail":"bad cursor"}`}))
	_, err = c.Votes(t.Context(), topgg.VotesQuery{Cursor: "x"})
	require.ErrorAs(t, err, &apiErr)
	require.Empty(t, apiErr.Hint, "not a refusal of the token")

	_, err = c.Legacy().Stats(t.Context(), srv.Project().PlatformID) // v0 401
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
	require.Empty(t, apiErr.Hint, "v0 takes legacy tokens")

	for _, part := range strings.Split(tok, ".") {
		require.NotContains(t, err.Error(), part)
	}

	// A project token of another project: refused, and no hint.
	other, err := topgg.New(topggtest.ProjectToken("1"), topgg.WithBaseURL(srv.URL), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	_, err = other.Project(t.Context())
	require.ErrorAs(t, err, &apiErr)
	require.ErrorIs(t, err, topgg.ErrUnauthorized)
	require.Empty(t, apiErr.Hint)
	require.NotContains(t, err.Error(), "hint")

	// A payload of unknown shape, or none, gives no hint and no failure.
	for _, odd := range []string{"opaque-token", "a.!!!.c", "h." + base64.RawURLEncoding.EncodeToString([]byte(`{"bot":"maybe"}`)) + ".s"} {
		oc, err := topgg.New(odd, topgg.WithBaseURL(srv.URL), topgg.WithRetryPolicy(fastRetries()))
		require.NoError(t, err, odd)
		_, err = oc.Project(t.Context())
		require.ErrorAs(t, err, &apiErr)
		require.Empty(t, apiErr.Hint, odd)
	}
}

// TestNewRefusesBearerPrefix: a token given as its header value is refused at New,
// before any request, with an error that says what to do and never quotes it.
func TestNewRefusesBearerPrefix(t *testing.T) {
	t.Parallel()
	tok := topggtest.ProjectToken("803190510032756736")
	for _, given := range []string{"Bearer " + tok, "bearer " + tok, "BEARER\t" + tok, "  Bearer " + tok + " "} {
		c, err := topgg.New(given)
		require.Error(t, err, "%q", given)
		require.Nil(t, c)
		require.Contains(t, err.Error(), `starts with "Bearer "`)
		require.Contains(t, err.Error(), "pass the token alone")
		ve, ok := errors.AsType[*topgg.ValidationError](err)
		require.True(t, ok, "a *topgg.ValidationError, so a caller can name its variable")
		require.Equal(t, "token", ve.Field)
		for _, part := range strings.Split(tok, ".") {
			require.NotContains(t, err.Error(), part)
		}
	}
	// Words that merely begin like it are tokens like any other.
	for _, ok := range []string{"Bearer", "Bearerish.token.value", "bearer-token"} {
		_, err := topgg.New(ok)
		require.NoError(t, err, ok)
	}
	// Any white space inside is refused too, not only ASCII.
	_, err := topgg.New("abc\u00a0def")
	require.ErrorContains(t, err, "white space")
	requireInvalid(t, err, "token")
}
