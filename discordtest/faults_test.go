package discordtest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
)

// do sends one authorized request to the fake and returns the response,
// body read.
func do(t *testing.T, ctx context.Context, srv *discordtest.Server, method, path string) (*http.Response, []byte, error) {
	t.Helper()
	var body io.Reader
	if method == http.MethodPut || method == http.MethodPost || method == http.MethodPatch {
		body = strings.NewReader(`[]`)
	}
	req, err := http.NewRequestWithContext(ctx, method, srv.URL+"/api/v9"+path, body)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+srv.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// TestEveryRouteTakesFaults: on each endpoint, a fault injected for its
// method and path is played on a request to that endpoint, once, and the
// next request gets the normal answer.
func TestEveryRouteTakesFaults(t *testing.T) {
	t.Parallel()
	guild := discordtest.GuildIDForShard(0, 0, 1)
	srv := newServer(t, discordtest.WithGuilds(guild))
	app := srv.ApplicationID()
	for route, path := range map[string]string{
		"GET /gateway":                 "/gateway",
		"GET /gateway/bot":             "/gateway/bot",
		"GET /users/@me":               "/users/@me",
		"GET /oauth2/applications/@me": "/oauth2/applications/@me",
		"GET /applications/@me":        "/applications/@me",
		"GET commands":                 "/applications/" + app + "/commands",
		"PUT commands":                 "/applications/" + app + "/commands",
		"POST commands":                "/applications/" + app + "/commands",
		"PUT guild commands":           "/applications/" + app + "/guilds/" + guild + "/commands",
		"PUT role":                     "/guilds/" + guild + "/members/1300000000000000001/roles/1300000000000000002",
		"DELETE role":                  "/guilds/" + guild + "/members/1300000000000000001/roles/1300000000000000002",
		"POST /users/@me/channels":     "/users/@me/channels",
		"POST message":                 "/channels/1300000000000000004/messages",
		"POST callback":                "/interactions/1300000000000000003/tok/callback",
		"PATCH original":               "/webhooks/" + app + "/tok/messages/@original",
		"POST followup":                "/webhooks/" + app + "/tok",
	} {
		method, _, _ := strings.Cut(route, " ")
		require.NoError(t, srv.Inject(discordtest.Fault{Method: method, Path: path, RetryAfter: 1500 * time.Millisecond}))
		resp, _, err := do(t, testContext(t), srv, method, path)
		require.NoError(t, err, route)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, route)
		assert.Equal(t, "1.5", resp.Header.Get("Retry-After"), route)
		resp, _, err = do(t, testContext(t), srv, method, path)
		require.NoError(t, err, route)
		assert.NotEqual(t, http.StatusTooManyRequests, resp.StatusCode, route)
	}
}

// TestRateLimitedAnswer: a 429 as Discord sends it, headers and body; a
// global one says so.
func TestRateLimitedAnswer(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	require.NoError(t, srv.Inject(discordtest.Fault{Method: "GET", Path: "/users/@me", Times: 2, RetryAfter: 250 * time.Millisecond}))
	require.NoError(t, srv.Inject(discordtest.Fault{Method: "GET", Path: "/users/@me", RetryAfter: time.Minute,
		Header: map[string]string{"X-RateLimit-Global": "true"}}))
	for _, want := range []struct {
		retry  string
		global bool
	}{{"0.25", false}, {"0.25", false}, {"60", true}} {
		resp, body, err := do(t, testContext(t), srv, http.MethodGet, "/users/@me")
		require.NoError(t, err)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, want.retry, resp.Header.Get("Retry-After"))
		assert.Equal(t, want.retry, resp.Header.Get("X-RateLimit-Reset-After"))
		assert.Equal(t, "0", resp.Header.Get("X-RateLimit-Remaining"))
		assert.Equal(t, want.global, resp.Header.Get("X-RateLimit-Global") == "true")
		assert.Equal(t, map[bool]string{false: "user", true: "global"}[want.global], resp.Header.Get("X-RateLimit-Scope"))
		var b struct {
			RetryAfter float64 `json:"retry_after"`
			Global     bool    `json:"global"`
		}
		require.NoError(t, json.Unmarshal(body, &b))
		assert.Equal(t, want.global, b.Global)
	}
	resp, _, err := do(t, testContext(t), srv, http.MethodGet, "/users/@me")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	calls := srv.Requests()
	require.Len(t, calls, 4)
	assert.Equal(t, http.StatusTooManyRequests, calls[0].Status, "a played fault is recorded")
}

// TestLongBody: the body has the size asked for; an endless one stops when
// the client goes.
func TestLongBody(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	require.NoError(t, srv.Inject(discordtest.Fault{Path: "/users/@me", Status: http.StatusOK, Body: "{" + strings.Repeat(" ", 99_999)}))
	resp, body, err := do(t, testContext(t), srv, http.MethodGet, "/users/@me")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Len(t, body, 100_000)

	require.NoError(t, srv.Inject(discordtest.Fault{Path: "/users/@me", Body: "{", Endless: true}))
	req, err := http.NewRequestWithContext(testContext(t), http.MethodGet, srv.APIBase()+"users/@me", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+srv.Token())
	resp, err = srv.Client().Do(req)
	require.NoError(t, err)
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<20))
	require.NoError(t, err)
	assert.Equal(t, int64(10<<20), n, "the endless body ended")
	require.NoError(t, resp.Body.Close())
}

// TestNoAnswer: a request under a long Delay is held until the client gives
// up (Held counts it meanwhile), or until Close.
func TestNoAnswer(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	require.NoError(t, srv.Inject(discordtest.Fault{Path: "/gateway", Delay: time.Hour, Times: 2}))
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { _, _, err := do(t, ctx, srv, http.MethodGet, "/gateway"); done <- err }()
	require.Eventually(t, func() bool { return srv.Held() == 1 }, waitFor, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Eventually(t, func() bool { return srv.Held() == 0 }, waitFor, time.Millisecond)

	assert.Equal(t, 1, srv.PendingFaults())
	resp, _, err := do(t, testContext(t), srv, http.MethodGet, "/users/@me")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another path is not held")

	// Close ends a held request too.
	go func() { _, _, err := do(t, testContext(t), srv, http.MethodGet, "/gateway"); done <- err }()
	require.Eventually(t, func() bool { return srv.Held() == 1 }, waitFor, time.Millisecond)
	srv.Close()
	<-done
}

// TestInjectMisuse: a fault that does nothing, a body with no answer to
// carry it, a negative count or wait, a bad status or a relative path is an
// error, and nothing is queued.
func TestInjectMisuse(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	for _, f := range []discordtest.Fault{
		{},
		{Path: "/gateway"},
		{Delay: time.Second, Body: "{}"},
		{Status: 429, Times: -1},
		{Delay: -time.Second},
		{Status: 1000},
		{Path: "gateway", Status: 500},
		{Method: "GET /gateway", Status: 500},
	} {
		require.Error(t, srv.Inject(f), "%+v", f)
	}
	assert.Zero(t, srv.PendingFaults())
}
