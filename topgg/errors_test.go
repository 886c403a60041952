package topgg_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestAPIErrorFromProblem: without Project() the client cannot know the kind
// of a wrong payload; the service refuses it with a 422 problem, not retried.
func TestAPIErrorFromProblem(t *testing.T) {
	t.Parallel()
	srv := newServer(t, topggtest.WithProject(topggtest.RobloxGame()))
	c := newClient(t, srv)

	err := c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(1)})
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, "PATCH /v1/projects/@me/metrics", apiErr.Op)
	require.Equal(t, 422, apiErr.StatusCode)
	require.Equal(t, "about:blank", apiErr.Type)
	require.Equal(t, "Unprocessable Entity", apiErr.Title)
	require.Contains(t, apiErr.Detail, "server_count")
	require.Equal(t, 1, apiErr.Attempts)
	require.Len(t, srv.Requests(), 1, "a 422 is not retried")
	require.Contains(t, string(apiErr.Body), `"status":422`)
	require.Contains(t, err.Error(), "422 Unprocessable Entity: "+apiErr.Detail, "the title repeats the status text: said once")
	requireOnlyAPIError(t, err)
}

// TestAPIErrorSaysEachThingOnce: a title equal to the status text, or a
// detail or message equal to what was said, is not repeated.
func TestAPIErrorSaysEachThingOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  topgg.APIError
		want string
	}{
		{topgg.APIError{Op: "GET /v1/projects/@me", StatusCode: 401, Title: "Unauthorized"}, "topgg: GET /v1/projects/@me: 401 Unauthorized"},
		{topgg.APIError{Op: "GET x", StatusCode: 400, Title: "Bad Request", Detail: "bad cursor"}, "topgg: GET x: 400 Bad Request: bad cursor"},
		{topgg.APIError{Op: "GET x", StatusCode: 503, Title: "Down", Detail: "down"}, "topgg: GET x: 503 Service Unavailable: Down"},
		{topgg.APIError{Op: "POST x", StatusCode: 429, Detail: "Too many requests"}, "topgg: POST x: 429 Too Many Requests"},
		{topgg.APIError{Op: "POST x", StatusCode: 404, Detail: "Bot not found"}, "topgg: POST x: 404 Not Found: Bot not found"},
	} {
		require.Equal(t, tc.want, tc.err.Error())
	}
}

func TestAPIErrorFromLegacy(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	l := newClient(t, srv).Legacy()
	for body, msg := range map[string]string{
		`{"error":"Bad things"}`:   "Bad things",
		`{"message":"Older form"}`: "Older form",
		`{"detail":"Detail form"}`: "Detail form",
		`not json at all`:          "",
		`{"error": 42}`:            "",
	} {
		require.NoError(t, srv.Inject(topggtest.Fault{Path: "/bots/*", Status: 418, Body: body}))
		_, err := l.Stats(t.Context(), srv.Project().PlatformID)
		var apiErr *topgg.APIError
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, 418, apiErr.StatusCode)
		require.Equal(t, msg, apiErr.Detail, body)
		require.Equal(t, body, string(apiErr.Body))
		requireOnlyAPIError(t, err)
	}
}

func TestAPIErrorBodyIsBounded(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	big := `{"detail":"` + strings.Repeat("x", 1<<20) + `"}`
	require.NoError(t, srv.Inject(topggtest.Fault{Status: 409, Body: big}))

	_, err := c.Project(t.Context())
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 409, apiErr.StatusCode)
	require.LessOrEqual(t, len(apiErr.Body), 4<<10)
	require.Less(t, len(err.Error()), 8<<10)
}

func TestErrNotFound(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Status: 404}))
	_, err := c.Project(t.Context())
	require.ErrorIs(t, err, topgg.ErrNotFound)
	require.NotErrorIs(t, err, topgg.ErrUnauthorized)
	require.NotErrorIs(t, err, topgg.ErrRateLimited)
}

func TestErrUnauthorized(t *testing.T) {
	t.Parallel()
	t.Run("401 v1", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		c, err := topgg.New("wrong-token", topgg.WithBaseURL(srv.URL))
		require.NoError(t, err)
		_, err = c.Project(t.Context())
		require.ErrorIs(t, err, topgg.ErrUnauthorized)
		require.NotErrorIs(t, err, topgg.ErrNotFound)
		requireOnlyAPIError(t, err)
		require.Len(t, srv.Requests(), 1, "a 401 is not retried")
	})
	t.Run("401 v0", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		c, err := topgg.New("wrong-token", topgg.WithBaseURL(srv.URL))
		require.NoError(t, err)
		_, err = c.Legacy().Stats(t.Context(), srv.Project().PlatformID)
		require.ErrorIs(t, err, topgg.ErrUnauthorized)
		var apiErr *topgg.APIError
		require.ErrorAs(t, err, &apiErr)
		require.NotEmpty(t, apiErr.Detail)
	})
	t.Run("400 invalid project token", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		c := newClient(t, srv)
		for _, body := range []string{
			`{"type":"about:blank","title":"Bad Request","status":400,"detail":"Invalid project token"}`,
			`{"title":"Bad Request","status":400}`,
			``,
		} {
			require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/metrics", Status: 400, Body: body}))
			err := c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(1)})
			require.ErrorIs(t, err, topgg.ErrUnauthorized, body)
		}
	})
	t.Run("400 refused cursor is not", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		c := newClient(t, srv)
		_, err := c.Votes(t.Context(), topgg.VotesQuery{Cursor: "bogus"})
		var apiErr *topgg.APIError
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, 400, apiErr.StatusCode)
		require.NotErrorIs(t, err, topgg.ErrUnauthorized)
	})
	t.Run("a 400 is decided by its route, never by its words", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t)
		c := newClient(t, srv)
		// v0 and the vote and command routes document no 400 for a bad token: the
		// message, whatever it says, does not make one unauthorized...
		for _, body := range []string{`{"error":"Invalid token"}`, `{"error":"limit must be a number"}`} {
			require.NoError(t, srv.Inject(topggtest.Fault{Path: "/bots/*", Status: 400, Body: body}))
			_, err := c.Legacy().Stats(t.Context(), srv.Project().PlatformID)
			require.NotErrorIs(t, err, topgg.ErrUnauthorized, body)
		}
		require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 400, Body: `{"detail":"Invalid project token"}`}))
		_, err := c.Votes(t.Context(), topgg.VotesQuery{StartDate: ago(time.Hour)})
		require.NotErrorIs(t, err, topgg.ErrUnauthorized)
		require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/commands", Status: 400, Body: `{"detail":"token"}`}))
		require.NotErrorIs(t, c.SetCommands(t.Context(), nil), topgg.ErrUnauthorized)
		// ...and on the routes whose only 400 is a bad token, any words do.
		require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Status: 400, Body: `{"detail":"name too long"}`}))
		_, err = c.Project(t.Context())
		require.ErrorIs(t, err, topgg.ErrUnauthorized)
	})
}

func TestDecodeError(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{not json`, `{"id": 5}`, `[]`, `{"created_at":"yesterday"}`, ` `} {
		srv := newServer(t)
		c := newClient(t, srv)
		require.NoError(t, srv.Inject(topggtest.Fault{Status: 200, Body: body}))

		_, err := c.Project(t.Context())
		if body == `{"created_at":"yesterday"}` {
			require.NoError(t, err, "unknown members are ignored")
			continue
		}
		var de *topgg.DecodeError
		require.ErrorAs(t, err, &de, body)
		require.Equal(t, 200, de.Status)
		require.Equal(t, "GET /v1/projects/@me", de.Op)
		require.Equal(t, strings.TrimSpace(body), strings.TrimSpace(string(de.Body)))
		require.NotNil(t, errors.Unwrap(err))
		var apiErr *topgg.APIError
		var reqErr *topgg.RequestError
		require.False(t, errors.As(err, &apiErr))
		require.False(t, errors.As(err, &reqErr))
		require.Len(t, srv.Requests(), 1, "a decode failure is not retried")
	}
}

func TestDecodeErrorVoteTimes(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	require.NoError(t, srv.Inject(topggtest.Fault{Status: 200, Body: `{"created_at":"2026-01-17 23:36","expires_at":"x","weight":1}`}))
	_, err := c.VoteStatus(t.Context(), "1", "")
	var de *topgg.DecodeError
	require.ErrorAs(t, err, &de)
}

func TestTimestampForms(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	want := time.Date(2026, 1, 17, 23, 36, 6, 0, time.UTC)
	for _, ts := range []string{
		"2026-01-17T23:36:06Z",
		"2026-01-17T23:36:06+00:00",
		"2026-01-17T23:36:06.3Z",
		"2026-01-17T23:36:06.34732Z",
		"2026-01-17T23:36:06.2510149+00:00",
		"2026-01-18T00:36:06.1234567+01:00",
	} {
		require.NoError(t, srv.Inject(topggtest.Fault{Status: 200, Body: `{"created_at":"` + ts + `","expires_at":"` + ts + `","weight":2}`}))
		st, err := c.VoteStatus(t.Context(), "1", "")
		require.NoError(t, err, ts)
		require.NotNil(t, st)
		require.Equal(t, 2, st.Weight)
		require.Equal(t, want, st.CreatedAt.UTC().Truncate(time.Second), ts)
	}
}

func TestRequestErrorConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	c, err := topgg.New("some.token.value", topgg.WithBaseURL("http://"+addr+"/api"), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	_, err = c.Project(t.Context())
	var reqErr *topgg.RequestError
	require.ErrorAs(t, err, &reqErr)
	require.Equal(t, 4, reqErr.Attempts, "connection failures are retried")
	require.Equal(t, "GET /v1/projects/@me", reqErr.Op)
	var opErr *net.OpError
	require.ErrorAs(t, err, &opErr, "the cause stays reachable")
	var apiErr *topgg.APIError
	var de *topgg.DecodeError
	require.False(t, errors.As(err, &apiErr))
	require.False(t, errors.As(err, &de))
	require.NotContains(t, err.Error(), "some.token.value")
}

// TestNewRefusesBadInput: a token or base URL that could never work is a
// *ValidationError naming it ("token", "base URL"); no error of New shows the
// token, the user info or the query.
func TestNewRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		token string
		opts  []topgg.Option
		field string // the *ValidationError's; "": another error
	}{
		{"", nil, "token"},
		{"   ", nil, "token"},
		{"two words", nil, "token"},
		{"ctl\x00char", nil, "token"},
		{"ctl\x7fchar", nil, "token"},
		{"tok", []topgg.Option{topgg.WithBaseURL("http://top.gg/api")}, "base URL"},
		{"tok", []topgg.Option{topgg.WithBaseURL("http://10.0.0.1/api")}, "base URL"},
		{"tok", []topgg.Option{topgg.WithBaseURL("ftp://top.gg/api")}, "base URL"},
		{"tok", []topgg.Option{topgg.WithBaseURL("/api")}, "base URL"},
		{"tok", []topgg.Option{topgg.WithBaseURL("https://user:hunter2@top.gg/api")}, "base URL"},
		{"tok", []topgg.Option{topgg.WithBaseURL("ftp://user:hunter2@top.gg/api")}, "base URL"},
		{"tok", []topgg.Option{topgg.WithBaseURL("https://user:hunter2@top.gg/%zz")}, "base URL"},
		{"tok", []topgg.Option{topgg.WithBaseURL("https://top.gg/api?x=1")}, "base URL"},
		{"tok", []topgg.Option{topgg.WithHTTPClient(nil)}, ""},
		{"tok", []topgg.Option{topgg.WithUserAgent("a\r\nX-Evil: 1")}, ""},
	} {
		c, err := topgg.New(tc.token, tc.opts...)
		require.Error(t, err, "%q", tc.token)
		require.Nil(t, c)
		if tc.field != "" {
			requireInvalid(t, err, tc.field)
		}
		if tc.token != "tok" && strings.TrimSpace(tc.token) != "" {
			require.NotContains(t, err.Error(), tc.token)
		}
		require.NotContains(t, err.Error(), "hunter2")
		require.NotContains(t, err.Error(), "user:", "user info is not shown")
		require.NotContains(t, err.Error(), "x=1", "the query is not shown")
	}
}

// TestNewRefusesV1BaseURL: a base URL that ends in /v1 would send every v1
// call to /v1/v1/...; it is refused with a hint, whatever its slashes.
func TestNewRefusesV1BaseURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"https://top.gg/api/v1", "https://top.gg/api/v1/", "http://127.0.0.1:1/api/v1//"} {
		_, err := topgg.New("tok", topgg.WithBaseURL(u))
		require.Error(t, err, u)
		require.Contains(t, err.Error(), "give the root, e.g. https://top.gg/api; the client adds /v1", u)
		requireInvalid(t, err, "base URL")
		require.LessOrEqual(t, strings.Count(err.Error(), "topgg:"), 1, "no prefix said twice: %s", err)
	}
	_, err := topgg.New("tok", topgg.WithBaseURL("https://proxy.example/v1x/api"))
	require.NoError(t, err, "only a last segment of v1 is refused")
}

func TestNewBaseURL(t *testing.T) {
	t.Parallel()
	c, err := topgg.New("tok")
	require.NoError(t, err)
	require.Contains(t, fmt.Sprint(c), "https://top.gg/api", "https by default")

	for _, ok := range []string{"http://127.0.0.1:1/api", "http://localhost:8080/api/", "http://[::1]:1/api", "https://example.com/api"} {
		_, err := topgg.New("tok", topgg.WithBaseURL(ok))
		require.NoError(t, err, ok)
	}
	_, err = topgg.New("tok", topgg.WithBaseURL("http://example.com/api"), topgg.WithInsecureHTTP())
	require.NoError(t, err, "plain http elsewhere only when asked for")
}

func TestWithHTTPClientIsCopied(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	hc := srv.Client()
	before := *hc
	c := newClient(t, srv, topgg.WithHTTPClient(hc), topgg.WithUserAgent("my-bot/1.0"))
	_, err := c.Project(t.Context())
	require.NoError(t, err)
	require.Equal(t, before.Transport, hc.Transport)
	require.Equal(t, before.Timeout, hc.Timeout)
	require.Equal(t, "my-bot/1.0", onlyRequest(t, srv).Header.Get("User-Agent"))
}

// requireOnlyAPIError checks that err is an API failure and not another layer's.
func requireOnlyAPIError(t *testing.T, err error) {
	t.Helper()
	var reqErr *topgg.RequestError
	var de *topgg.DecodeError
	var ve *topgg.ValidationError
	require.False(t, errors.As(err, &reqErr))
	require.False(t, errors.As(err, &de))
	require.False(t, errors.As(err, &ve))
}

// TestNilOption: a nil Option is an error (ErrNilArgument), not a panic.
func TestNilOption(t *testing.T) {
	t.Parallel()
	c, err := topgg.New("token", topgg.WithUserAgent("ua"), nil)
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	require.Contains(t, err.Error(), "option 1")
	require.Nil(t, c)
}

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
