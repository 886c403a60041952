package topggtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testlog"
)

// t0 is the fake clock's start, a real-looking service timestamp.
var t0 = time.Date(2026, 1, 17, 23, 36, 6, 347320000, time.UTC)

// fakeClock is a settable clock for WithNow.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: t0} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newTestServer(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s, err := NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "body: %s", r.Body)
}

// send makes one request to s.URL+path. body is nil (none), a string (raw)
// or a value to marshal; a body goes with Content-Type application/json.
func send(t *testing.T, s *Server, method, path, auth string, body any) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+path, rd)
	require.NoError(t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return do(t, s, req)
}

// do sends req with s's client and reads the whole answer.
func do(t *testing.T, s *Server, req *http.Request) response {
	t.Helper()
	res, err := s.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{Status: res.StatusCode, Header: res.Header, Body: raw}
}

// sdkHeaders are the headers the official SDKs send besides the token's:
// @top-gg/sdk 3.1.6 (undici) sets Content-Type on a request with a body;
// topggpy sets it on every request, GET included.
var (
	nodeSDK   = map[string]string{"User-Agent": "undici"}
	pythonSDK = map[string]string{"Content-Type": "application/json", "User-Agent": "topggpy (https://github.com/top-gg-community/python-sdk 1.5.0) Python/"}
)

// sendAs makes one request to s.URL+path with exactly these headers (plus
// Content-Type application/json when there is a body) and a raw body.
func sendAs(t *testing.T, s *Server, method, path string, header map[string]string, auth, body string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req.Header.Set("Authorization", auth)
	return do(t, s, req)
}

// v1 calls URL+"/v1"+path with the bearer token.
func v1(t *testing.T, s *Server, method, path string, body any) response {
	t.Helper()
	return send(t, s, method, "/v1"+path, "Bearer "+s.Token(), body)
}

// v0 calls URL+path with the bare token.
func v0(t *testing.T, s *Server, method, path string, body any) response {
	t.Helper()
	return send(t, s, method, path, s.Token(), body)
}

type problemBody struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// requireProblem checks a v1 error answer and returns its detail.
func requireProblem(t *testing.T, r response, status int) string {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	var p problemBody
	r.decode(t, &p)
	require.Equal(t, status, p.Status)
	require.NotEmpty(t, p.Type)
	require.Equal(t, http.StatusText(status), p.Title)
	require.NotEmpty(t, p.Detail)
	return p.Detail
}

// requireLegacyError checks a v0 error answer and returns its message.
func requireLegacyError(t *testing.T, r response, status int) string {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	var e struct {
		Error string `json:"error"`
	}
	r.decode(t, &e)
	require.NotEmpty(t, e.Error)
	return e.Error
}

func requireStatus(t *testing.T, r response, status int) {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
}

// syncBuffer collects the log lines the code under test writes from its goroutines.
type syncBuffer = testlog.Buffer
