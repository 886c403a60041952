package topggtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	requireStatus(t, r, http.StatusTooManyRequests)
	require.Equal(t, "2", r.Header.Get("Retry-After"))
	require.JSONEq(t, `{"retry-after":2}`, string(r.Body))

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
