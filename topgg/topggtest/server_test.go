package topggtest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestURLIsMountedUnderAPIPrefix(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	require.Equal(t, "http", u.Scheme)
	require.Equal(t, "127.0.0.1", u.Hostname())
	require.Equal(t, "/api", u.Path)

	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusOK)

	// A client that drops the base path reaches the host root: 404.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u.Scheme+"://"+u.Host+"/v1/projects/@me", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	res, err := s.Client().Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

func TestDefaultTokenLooksLikeAProjectToken(t *testing.T) {
	t.Parallel()
	for _, p := range []Project{DiscordBot(), DiscordServer(), RobloxGame()} {
		s := newTestServer(t, WithProject(p))
		parts := strings.Split(s.Token(), ".")
		require.Len(t, parts, 3)
		_, err := base64.RawURLEncoding.DecodeString(parts[0])
		require.NoError(t, err)
		_, err = base64.RawURLEncoding.DecodeString(parts[2])
		require.NoError(t, err)
		payload, err := base64.StdEncoding.DecodeString(parts[1])
		require.NoError(t, err)
		var claims map[string]string
		require.NoError(t, json.Unmarshal(payload, &claims))
		require.Equal(t, map[string]string{"_t": "", "id": p.ID}, claims)
	}
}

func TestWithTokenReplacesDefault(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, WithToken("custom-token"))
	require.Equal(t, "custom-token", s.Token())
	requireStatus(t, send(t, s, http.MethodGet, "/v1/projects/@me", "Bearer custom-token", nil), http.StatusOK)
	requireProblem(t, send(t, s, http.MethodGet, "/v1/projects/@me", "Bearer "+ProjectToken(DiscordBot().ID), nil), http.StatusBadRequest)
}

// TestV1Auth: a refused token is a 400 on the five routes where the spec
// says so (project details, PATCH project, announcements, metrics, batch),
// a 401 on the others, whatever is wrong with it; the request goes no
// further.
func TestV1Auth(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, rt := range []struct {
		method, path string
		body         string
		status       int
	}{
		{http.MethodGet, "/v1/projects/@me", "", http.StatusBadRequest},
		{http.MethodPatch, "/v1/projects/@me", `{"headline":{"en":"A new headline"}}`, http.StatusBadRequest},
		{http.MethodPost, "/v1/projects/@me/announcements", `{"title":"Hello","content":"An announcement."}`, http.StatusBadRequest},
		{http.MethodPatch, "/v1/projects/@me/metrics", `{"server_count":1}`, http.StatusBadRequest},
		{http.MethodPost, "/v1/projects/@me/metrics/batch", `{"data":[{"metrics":{"server_count":1}}]}`, http.StatusBadRequest},
		{http.MethodPut, "/v1/projects/@me/commands", `[]`, http.StatusUnauthorized},
		{http.MethodGet, "/v1/projects/@me/votes?startDate=2026-01-17", "", http.StatusUnauthorized},
		{http.MethodGet, "/v1/projects/@me/votes/1", "", http.StatusUnauthorized},
	} {
		for name, auth := range map[string]string{
			"missing":      "",
			"bare token":   s.Token(),
			"wrong token":  "Bearer " + s.Token() + "x",
			"other scheme": "Basic " + s.Token(),
		} {
			t.Run(rt.method+" "+rt.path+" "+name, func(t *testing.T) {
				var body any
				if rt.body != "" {
					body = rt.body
				}
				detail := requireProblem(t, send(t, s, rt.method, rt.path, auth, body), rt.status)
				require.NotContains(t, detail, s.Token())
			})
		}
	}
	require.Empty(t, s.Metrics())
	require.Empty(t, s.Announcements())
	requireStatus(t, send(t, s, http.MethodGet, "/v1/projects/@me", "bearer "+s.Token(), nil), http.StatusOK)
}

// TestV0Auth: v0 takes the bare token, and "Bearer <token>" as the official
// Python SDK sent it on v0 (topggpy 1.x: every call, GET ones with a JSON
// Content-Type too); the record keeps the header as sent.
func TestV0Auth(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	id := DiscordBot().PlatformID
	requireStatus(t, send(t, s, http.MethodGet, "/bots/"+id, s.Token(), nil), http.StatusOK)
	for _, auth := range []string{"Bearer " + s.Token(), "bearer " + s.Token()} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+"/bots/"+id+"/stats", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "topggpy (https://github.com/top-gg-community/python-sdk 1.5.0) Python/")
		res, err := s.Client().Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, auth)
		reqs := s.Requests()
		require.Equal(t, auth, reqs[len(reqs)-1].Header.Get("Authorization"), "recorded as sent")
	}
	for name, auth := range map[string]string{
		"missing":      "",
		"bearer alone": "Bearer ",
		"wrong bearer": "Bearer " + s.Token() + "x",
		"wrong token":  s.Token() + "x",
		"other scheme": "Basic " + s.Token(),
	} {
		t.Run(name, func(t *testing.T) {
			msg := requireLegacyError(t, send(t, s, http.MethodGet, "/bots/"+id, auth, nil), http.StatusUnauthorized)
			require.NotContains(t, msg, s.Token())
		})
	}
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, p := range []string{"/v1/projects/123", "/v1/projects/@me/nope", "/v1/projects/@me/", "/v1", "/v1/projects/@me/metrics/batch/x"} {
		requireProblem(t, send(t, s, http.MethodGet, p, "Bearer "+s.Token(), nil), http.StatusNotFound)
	}
	for _, p := range []string{"/users/1", "/bots/1/nope", "/", "/bots/", "/v2/projects/@me"} {
		requireLegacyError(t, send(t, s, http.MethodGet, p, s.Token(), nil), http.StatusNotFound)
	}

	r := v1(t, s, http.MethodDelete, "/projects/@me", nil)
	requireProblem(t, r, http.StatusMethodNotAllowed)
	require.Equal(t, "GET, PATCH", r.Header.Get("Allow"))
	requireProblem(t, v1(t, s, http.MethodPost, "/projects/@me/metrics", `{"server_count":1}`), http.StatusMethodNotAllowed)
	r = v1(t, s, http.MethodDelete, "/projects/@me/commands", nil)
	requireProblem(t, r, http.StatusMethodNotAllowed)
	require.Equal(t, "POST, PUT", r.Header.Get("Allow"))
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/metrics/batch", nil), http.StatusMethodNotAllowed)

	r = v0(t, s, http.MethodPut, "/bots/1/stats", nil)
	requireLegacyError(t, r, http.StatusMethodNotAllowed)
	require.Equal(t, "GET, POST", r.Header.Get("Allow"))
}

func TestBodyMustBeJSON(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPatch, s.URL+"/v1/projects/@me/metrics", strings.NewReader(`{"server_count":1}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	req.Header.Set("Content-Type", "text/plain")
	res, err := s.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnsupportedMediaType, res.StatusCode)
	require.Empty(t, s.Metrics())

	req.Body = io.NopCloser(strings.NewReader(`{"server_count":1}`))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	res, err = s.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode)
}

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	big := bytes.Repeat([]byte("a"), maxBodyBytes+1)
	requireProblem(t, v1(t, s, http.MethodPatch, "/projects/@me", big), http.StatusRequestEntityTooLarge)
	reqs := s.Requests()
	require.Len(t, reqs, 1)
	require.Len(t, reqs[0].Body, maxBodyBytes)
}

func TestRequestsAreRecorded(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me/votes?startDate=2026-01-01T00:00:00Z", nil), http.StatusOK)
	clock.Advance(1)
	requireStatus(t, v1(t, s, http.MethodPatch, "/projects/@me/metrics", `{"server_count":3}`), http.StatusNoContent)
	requireLegacyError(t, send(t, s, http.MethodGet, "/bots/1", "", nil), http.StatusUnauthorized)

	reqs := s.Requests()
	require.Len(t, reqs, 3)
	require.Equal(t, http.MethodGet, reqs[0].Method)
	require.Equal(t, "/v1/projects/@me/votes", reqs[0].Path)
	require.Equal(t, "2026-01-01T00:00:00Z", reqs[0].Query.Get("startDate"))
	require.Equal(t, "Bearer "+s.Token(), reqs[0].Header.Get("Authorization"))
	require.Empty(t, reqs[0].Body)
	require.Equal(t, t0, reqs[0].At)
	require.Equal(t, "/v1/projects/@me/metrics", reqs[1].Path)
	require.JSONEq(t, `{"server_count":3}`, string(reqs[1].Body))
	require.Equal(t, t0.Add(1), reqs[1].At)
	require.Equal(t, "/bots/1", reqs[2].Path)

	// The copy is the caller's.
	reqs[0].Header.Set("Authorization", "changed")
	require.Equal(t, "Bearer "+s.Token(), s.Requests()[0].Header.Get("Authorization"))
}

func TestAcceptsCountsConnections(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.Zero(t, s.Accepts())
	for range 5 {
		requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusOK)
	}
	require.Equal(t, 1, s.Accepts(), "keep-alive reuse should use one connection")

	s.CloseClientConnections()
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusOK)
	require.Equal(t, 2, s.Accepts())

	noReuse := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	t.Cleanup(noReuse.CloseIdleConnections)
	for range 3 {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+"/v1/projects/@me", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.Token())
		res, err := noReuse.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	require.Equal(t, 5, s.Accepts())
}

func TestCloseIsIdempotent(t *testing.T) {
	t.Parallel()
	s, err := NewServer()
	require.NoError(t, err)
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusOK)
	s.Close()
	s.Close()
	_, err = http.Get(s.URL + "/v1/projects/@me")
	require.Error(t, err)
}

func TestLoggerNeverSeesTheToken(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newTestServer(t, WithLogger(logger))
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusOK)
	requireStatus(t, v0(t, s, http.MethodGet, "/bots?limit=1", nil), http.StatusOK)
	requireStatus(t, send(t, s, http.MethodGet, "/v1/projects/@me", "Bearer wrong", nil), http.StatusBadRequest)
	out := buf.String()
	assert.Contains(t, out, "path=/v1/projects/@me")
	assert.Contains(t, out, "status=400")
	assert.NotContains(t, out, s.Token())
	assert.NotContains(t, out, "wrong")
}

func TestOptionsValidation(t *testing.T) {
	t.Parallel()
	for _, opt := range []Option{WithPageSize(0), WithNow(nil)} {
		s, err := NewServer(opt)
		require.Error(t, err)
		require.Nil(t, s)
	}
}

// TestRepeatedSlashesMerged: @top-gg/sdk 3.0.4 to 3.1.2 joined "/api/" and
// "/bots/stats" into "/api//bots/stats", which Top.gg's edge merges; the
// record keeps the path as sent. A trailing slash stays unknown.
func TestRepeatedSlashesMerged(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	requireStatus(t, sendAs(t, s, http.MethodPost, "//bots/stats", nodeSDK, s.Token(), `{"server_count":3}`), http.StatusOK)
	requireStatus(t, v1(t, s, http.MethodGet, "//projects//@me", nil), http.StatusOK)
	st, ok := s.LegacyStats()
	require.True(t, ok)
	require.Equal(t, 3, st.ServerCount)
	reqs := s.Requests()
	require.Equal(t, "//bots/stats", reqs[0].Path)
	require.Equal(t, "/v1//projects//@me", reqs[1].Path)
	requireLegacyError(t, v0(t, s, http.MethodGet, "/bots//", nil), http.StatusNotFound)
}

func TestFaultStatusByVersion(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.Inject(Fault{Path: "/v1/projects/@me", Status: http.StatusServiceUnavailable}))
	require.NoError(t, s.Inject(Fault{Path: "/bots*", Status: http.StatusBadGateway}))
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusServiceUnavailable)
	requireLegacyError(t, v0(t, s, http.MethodGet, "/bots", nil), http.StatusBadGateway)
	require.Zero(t, s.PendingFaults())
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusOK)
	requireStatus(t, v0(t, s, http.MethodGet, "/bots", nil), http.StatusOK)
}

func TestFaultMatchingTimesAndOrder(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.Inject(Fault{Method: "patch", Path: "/v1/projects/@me/metrics", Times: 2, Status: 500}))
	require.NoError(t, s.Inject(Fault{Path: "/v1/projects/@me/*", Status: 502}))
	require.NoError(t, s.Inject(Fault{Status: 504}))
	require.Equal(t, 4, s.PendingFaults())

	// GET /projects/@me matches neither the first (method, path) nor the
	// second (prefix needs the trailing slash): the catch-all hits.
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me", nil), 504)
	requireProblem(t, v1(t, s, http.MethodGet, "/projects/@me/votes", nil), 502)
	requireProblem(t, v1(t, s, http.MethodPatch, "/projects/@me/metrics", `{"server_count":1}`), 500)
	requireProblem(t, v1(t, s, http.MethodPatch, "/projects/@me/metrics", `{"server_count":1}`), 500)
	requireStatus(t, v1(t, s, http.MethodPatch, "/projects/@me/metrics", `{"server_count":1}`), http.StatusNoContent)
	require.Zero(t, s.PendingFaults())

	require.Len(t, s.Metrics(), 1, "faulted requests are not applied")
	require.Len(t, s.Requests(), 5, "faulted requests are recorded")
}

func TestFaultRetryAfter(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.Inject(Fault{RetryAfter: 1500 * time.Millisecond}))
	r := v1(t, s, http.MethodPatch, "/projects/@me/metrics", `{"server_count":1}`)
	requireProblem(t, r, http.StatusTooManyRequests) // a v1 error, as the cooldown's 429 is
	require.Equal(t, "2", r.Header.Get("Retry-After"))
	var body struct {
		RetryAfter int `json:"retry-after"`
	}
	r.decode(t, &body)
	require.Equal(t, 2, body.RetryAfter)
	require.NoError(t, s.Inject(Fault{RetryAfter: 1500 * time.Millisecond}))
	r = v0(t, s, http.MethodGet, "/bots", nil)
	requireStatus(t, r, http.StatusTooManyRequests)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	require.JSONEq(t, `{"retry-after":2}`, string(r.Body), "v0: as its own limit answers")

	require.NoError(t, s.Inject(Fault{Status: http.StatusServiceUnavailable, RetryAfter: 3 * time.Second}))
	r = v1(t, s, http.MethodGet, "/projects/@me", nil)
	requireProblem(t, r, http.StatusServiceUnavailable)
	require.Equal(t, "3", r.Header.Get("Retry-After"))
}

func TestFaultCustomBody(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.Inject(Fault{Status: 500, Body: `<html>oops</html>`, ContentType: "text/html"}))
	require.NoError(t, s.Inject(Fault{Status: 400, Body: `{"message":"old style"}`}))
	r := v1(t, s, http.MethodGet, "/projects/@me", nil)
	require.Equal(t, 500, r.Status)
	require.Equal(t, "text/html", r.Header.Get("Content-Type"))
	require.Equal(t, "<html>oops</html>", string(r.Body))
	r = v0(t, s, http.MethodGet, "/bots", nil)
	require.Equal(t, 400, r.Status)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	require.Equal(t, `{"message":"old style"}`, string(r.Body))
}

func TestFaultDrop(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.Inject(Fault{Method: http.MethodPost, Drop: true}))
	body := `{"data":[{"metrics":{"server_count":1}}]}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/v1/projects/@me/metrics/batch", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	req.Header.Set("Content-Type", "application/json")
	res, err := s.Client().Do(req)
	if err == nil {
		res.Body.Close()
	}
	require.Error(t, err, "the connection closes without an answer")
	require.Empty(t, s.Metrics())
	require.Len(t, s.Requests(), 1)

	// The next connection works.
	requireStatus(t, v1(t, s, http.MethodPost, "/projects/@me/metrics/batch", body), http.StatusNoContent)
	require.Equal(t, 2, s.Accepts())
}

func TestFaultDelayHonoursContext(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	s := newTestServer(t, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	require.NoError(t, s.Inject(Fault{Delay: time.Minute, Status: 500}))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/v1/projects/@me", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	start := time.Now()
	res, err := s.Client().Do(req)
	if err == nil {
		res.Body.Close()
	}
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 30*time.Second)
	// The handler gives up with the client instead of sleeping on.
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "fault=true") }, 10*time.Second, 5*time.Millisecond)

	// The fault was consumed by the cancelled request.
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusOK)
}

func TestFaultDelayOnlyThenServes(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.Inject(Fault{Delay: 20 * time.Millisecond}))
	start := time.Now()
	requireStatus(t, v1(t, s, http.MethodGet, "/projects/@me", nil), http.StatusOK)
	require.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
}

func TestCloseDropsDelayedRequests(t *testing.T) {
	t.Parallel()
	s, err := NewServer()
	require.NoError(t, err)
	require.NoError(t, s.Inject(Fault{Delay: time.Minute}))
	errc := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, s.URL+"/v1/projects/@me", nil)
		if !assert.NoError(t, err) {
			errc <- err
			return
		}
		req.Header.Set("Authorization", "Bearer "+s.Token())
		res, err := s.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	require.Eventually(t, func() bool { return len(s.Requests()) == 1 }, 5*time.Second, time.Millisecond)
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for the delay")
	}
	err = <-errc
	require.Error(t, err)
	require.False(t, errors.Is(err, context.DeadlineExceeded))
}

func TestFaultEchoesAuthorizationAndAddsHeaders(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.Inject(Fault{Status: 401, Body: `{"detail":"bad header ` + "{{authorization}}" + `"}`,
		Header: map[string]string{"X-Seen": "{{authorization}}", "Retry-After": "Wed, 21 Oct 2037 07:28:00 GMT"}, RetryAfter: time.Second}))
	r := v1(t, s, http.MethodGet, "/projects/@me", nil)
	require.Equal(t, 401, r.Status)
	require.JSONEq(t, `{"detail":"bad header Bearer `+s.Token()+`"}`, string(r.Body))
	require.Equal(t, "Bearer "+s.Token(), r.Header.Get("X-Seen"))
	require.Equal(t, "Wed, 21 Oct 2037 07:28:00 GMT", r.Header.Get("Retry-After"), "Header wins over RetryAfter")

	require.NoError(t, s.Inject(Fault{Path: "/bots*", Status: 400, Body: "{{authorization}}", ContentType: "text/plain"}))
	r = v0(t, s, http.MethodGet, "/bots", nil)
	require.Equal(t, 400, r.Status)
	require.Equal(t, s.Token(), string(r.Body))
}

func TestFaultRetryAfterOnAnyStatus(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, status := range []int{400, 403, 500, 503} {
		require.NoError(t, s.Inject(Fault{Status: status, RetryAfter: time.Minute}))
		r := v1(t, s, http.MethodGet, "/projects/@me", nil)
		requireProblem(t, r, status)
		require.Equal(t, "60", r.Header.Get("Retry-After"), "status %d", status)
	}
}

func TestFaultHitNumbers(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	headers := map[string]string{"X-Hit": "{{hit}}"}
	require.NoError(t, s.Inject(Fault{Path: "/v1/projects/@me/votes", Status: 200, Times: 3, Body: `{"cursor":"c` + "{{hit}}" + `","data":[]}`, Header: headers}))
	headers["X-Hit"] = "changed after Inject"
	for i := 1; i <= 3; i++ {
		r := v1(t, s, http.MethodGet, "/projects/@me/votes?startDate=2026-01-01T00:00:00Z", nil)
		require.Equal(t, 200, r.Status)
		require.JSONEq(t, fmt.Sprintf(`{"cursor":"c%d","data":[]}`, i), string(r.Body))
		require.Equal(t, fmt.Sprint(i), r.Header.Get("X-Hit"))
	}
	require.Zero(t, s.PendingFaults())
}
