package topgg_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestOneConnection: every answer, error replies included, is drained and closed,
// so 1,000 sequential calls share one keep-alive connection.
func TestOneConnection(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	// No retries: each call is one request, so the mix below is exact. The 429s
	// carry no Retry-After, so they leave no block that would make later calls
	// local (a local refusal would prove nothing about connections).
	c := newClient(t, srv, topgg.WithRetryPolicy(topgg.NoRetries()))
	const voter, stranger = "800506814562787328", "123456789012345678"
	srv.AddVote(topggtest.Vote{UserID: voter, PlatformID: "146183080879613966"})

	// 100 KiB: the error keeps 4 KiB, so the rest must be drained for the
	// connection to be reused.
	bigProblem := `{"title":"Internal Server Error","status":500,"detail":"` + strings.Repeat("x", 100<<10) + `"}`

	counts := map[int]int{}
	for i := range 1000 {
		switch i % 5 {
		case 0: // 200 with a body
			st, err := c.VoteStatus(t.Context(), voter, "")
			require.NoError(t, err)
			require.NotNil(t, st)
			counts[200]++
		case 1: // 404: no vote
			st, err := c.VoteStatus(t.Context(), stranger, "")
			require.NoError(t, err)
			require.Nil(t, st)
			counts[404]++
		case 2: // 429 without Retry-After
			require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes/*", Status: 429, Body: `{"title":"Too Many Requests","status":429}`}))
			_, err := c.VoteStatus(t.Context(), voter, "")
			var rl *topgg.RateLimitError
			require.ErrorAs(t, err, &rl)
			require.False(t, rl.Local)
			counts[429]++
		case 3: // 500 with a problem body far larger than what the error keeps
			require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes/*", Status: 500, Body: bigProblem, ContentType: "application/problem+json"}))
			_, err := c.VoteStatus(t.Context(), voter, "")
			var apiErr *topgg.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, 500, apiErr.StatusCode)
			counts[500]++
		case 4: // 204 without a body
			require.NoError(t, c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(i)}))
			counts[204]++
		}
	}
	require.Equal(t, map[int]int{200: 200, 404: 200, 429: 200, 500: 200, 204: 200}, counts)
	require.Len(t, srv.Requests(), 1000)
	require.Equal(t, 1, srv.Accepts(), "one connection for every call")
}

// TestLargeErrorBodyKeepsConnection: an error body larger than what the error
// keeps is still drained, so the connection is reused.
func TestLargeErrorBodyKeepsConnection(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv, topgg.WithRetryPolicy(topgg.NoRetries()))
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = 'x'
	}
	for range 20 {
		require.NoError(t, srv.Inject(topggtest.Fault{Status: 500, Body: `{"detail":"` + string(big) + `"}`}))
		_, err := c.Project(t.Context())
		require.Error(t, err)
		_, err = c.Project(t.Context())
		require.NoError(t, err)
	}
	require.Equal(t, 1, srv.Accepts())
}

// TestConcurrentUse: the client is safe for concurrent use (run with -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv, topgg.WithLegacyLimit(0, 0))
	srv.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
	bot := srv.Project().PlatformID
	done := make(chan error, 64)
	for i := range cap(done) {
		go func() {
			var err error
			switch i % 4 {
			case 0:
				_, err = c.Project(t.Context())
			case 1:
				_, err = c.VoteStatus(t.Context(), "1", "")
			case 2:
				err = c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(i)})
			case 3:
				_, err = c.Legacy().HasVoted(t.Context(), bot, "2")
			}
			done <- err
		}()
	}
	for range cap(done) {
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("concurrent calls did not finish")
		}
	}
	// Connections opened by the burst are kept idle and reused afterwards.
	opened := srv.Accepts()
	for range 20 {
		_, err := c.Project(t.Context())
		require.NoError(t, err)
	}
	require.Equal(t, opened, srv.Accepts())
}

// TestRequestOfAnEndedTermIsNotSent: a request whose context carries a fleet
// leader's term is sent while the term is valid, and not at all once its
// deadline passed (read on the term's clock): the error wraps clock.ErrTermOver
// and is not worth retrying.
func TestRequestOfAnEndedTermIsNotSent(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv)
	start := time.Unix(1_700_000_000, 0)
	clk := clock.NewFake(start)
	ctx := clock.WithTerm(context.Background(), clock.NewTerm(clk, start.Add(time.Second), nil))

	_, err := c.Project(ctx)
	require.NoError(t, err, "sent within the term")
	clk.Advance(time.Second)
	_, err = c.Project(ctx)
	require.ErrorIs(t, err, clock.ErrTermOver)
	assert.False(t, topgg.Retryable(err))
	assert.Len(t, srv.Requests(), 1, "a request went out after the term's deadline")
}

// TestRetryOfAnEndedTermIsNotSent: the term is checked before each attempt,
// so a retry due after the term ended (the lease was lost during the
// backoff) is not sent.
func TestRetryOfAnEndedTermIsNotSent(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Status: http.StatusServiceUnavailable}))
	tm := clock.NewTerm(nil, time.Now().Add(time.Hour), nil)
	c := newClient(t, srv, topgg.WithObserver(func(topgg.Request) { tm.End(nil) })) // after the first attempt
	_, err := c.Project(clock.WithTerm(context.Background(), tm))
	require.ErrorIs(t, err, clock.ErrTermOver)
	assert.Len(t, srv.Requests(), 1, "the retry went out after the term ended")
}

// TestRedirectOfAnEndedTermIsNotFollowed: the term is checked before the
// client hands a request to net/http, but net/http follows a redirect
// (307/308 repeat a POST with its body) by itself: a leader whose term ends
// while the redirect is in flight (a pause after the 307 arrived) still
// sends the redirected request. safeRedirects should check the request's
// term too.
func TestRedirectOfAnEndedTermIsNotFollowed(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	clk := clock.NewFake(start)
	tm := clock.NewTerm(clk, start.Add(time.Second), nil)
	var followed atomic.Int32
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/old/") {
			clk.Advance(time.Hour) // the leader pauses past its term while the 307 travels
			http.Redirect(w, r, "/new/"+strings.TrimPrefix(r.URL.Path, "/old/"), http.StatusTemporaryRedirect)
			return
		}
		followed.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(ts.Close)
	c, err := topgg.New("token", topgg.WithBaseURL(ts.URL+"/old"), topgg.WithHTTPClient(ts.Client()), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	err = c.UpdateMetrics(clock.WithTerm(context.Background(), tm), topgg.BotMetrics{ServerCount: new(1)})
	assert.ErrorIs(t, err, clock.ErrTermOver)
	assert.Zero(t, followed.Load(), "the redirected request went out after the term's deadline")
}

// BenchmarkTermWindow measures the window a fleet leader's term check leaves
// (see fleet's package doc): the term is checked right before the client
// hands the request to its *http.Client, so what follows the check is the
// transport's work up to the last byte written, reported as
// window-ns/op (from httptrace's GetConn to WroteRequest, on loopback, with a
// kept-alive connection; the check itself is BenchmarkCheck in internal/clock).
func BenchmarkTermWindow(b *testing.B) {
	srv, err := topggtest.NewServer()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	if err != nil {
		b.Fatal(err)
	}
	var window time.Duration
	var getConn time.Time
	trace := &httptrace.ClientTrace{
		GetConn:      func(string) { getConn = time.Now() },
		WroteRequest: func(httptrace.WroteRequestInfo) { window += time.Since(getConn) },
	}
	tm := clock.NewTerm(nil, time.Now().Add(time.Hour), nil)
	ctx := httptrace.WithClientTrace(clock.WithTerm(context.Background(), tm), trace)
	if _, err := c.Project(ctx); err != nil { // opens the connection
		b.Fatal(err)
	}
	window = 0
	for b.Loop() {
		if _, err := c.Project(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(window.Nanoseconds())/float64(b.N), "window-ns/op")
}

// redirector is an https server that answers every request with a redirect to
// target+path and counts the requests.
func redirector(t *testing.T, status int, target string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, target+strings.TrimPrefix(r.URL.Path, "/api"), status)
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

// TestRedirectOffTheBaseURLRefused: an https base URL that redirects to plain http
// on the same host, or to another host, is refused before the token could
// follow: the target gets no request, the error says why, no retry is made, and
// the caller's *http.Client is left as it was.
func TestRedirectOffTheBaseURLRefused(t *testing.T) {
	t.Parallel()
	plain := newServer(t) // http://127.0.0.1:<port>/api, the same host as the TLS server
	other, otherHits := redirector(t, http.StatusFound, "https://127.0.0.1:1")
	for _, tc := range []struct {
		name   string
		status int
		target string
		sink   func() int
	}{
		{"https to http, same host, 301", http.StatusMovedPermanently, plain.URL, func() int { return len(plain.Requests()) }},
		{"https to http, same host, 307", http.StatusTemporaryRedirect, plain.URL, func() int { return len(plain.Requests()) }},
		{"https to http, same host, 308", http.StatusPermanentRedirect, plain.URL, func() int { return len(plain.Requests()) }},
		{"https to another https host", http.StatusFound, other.URL + "/api", func() int { return int(otherHits.Load()) }},
		{"https to another host name", http.StatusFound, strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/api", func() int { return int(otherHits.Load()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, hits := redirector(t, tc.status, tc.target)
			hc := ts.Client()
			c, err := topgg.New(plain.Token(), topgg.WithBaseURL(ts.URL+"/api"), topgg.WithHTTPClient(hc), topgg.WithRetryPolicy(fastRetries()))
			require.NoError(t, err)

			for _, call := range []func() error{
				func() error { _, err := c.Project(t.Context()); return err },
				func() error { return c.UpdateMetrics(t.Context(), topgg.BotMetrics{ServerCount: new(1)}) },
				func() error { _, err := c.Legacy().Stats(t.Context(), plain.Project().PlatformID); return err },
			} {
				before := hits.Load()
				err := call()
				require.ErrorIs(t, err, topgg.ErrUnsafeRedirect)
				var re *topgg.RequestError
				require.ErrorAs(t, err, &re)
				require.Equal(t, 1, re.Attempts, "a refused redirect is not retried")
				require.Equal(t, before+1, hits.Load())
				require.False(t, topgg.Retryable(err))
				require.Contains(t, err.Error(), ts.URL, "the error names where it was sent")
				require.NotContains(t, err.Error(), plain.Token())
			}
			require.Zero(t, tc.sink(), "the token must not reach the redirect's target")
			require.Nil(t, hc.CheckRedirect, "the caller's client is not changed")
		})
	}
}

// TestRedirectWithinTheBaseURLFollowed: a redirect that keeps the scheme and host is
// followed as before (with the token), within net/http's limit and the caller's
// own CheckRedirect.
func TestRedirectWithinTheBaseURLFollowed(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var sawAuth atomic.Bool
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/loop"):
			http.Redirect(w, r, "/loop"+r.URL.Path, http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/old/"):
			http.Redirect(w, r, "/new/"+strings.TrimPrefix(r.URL.Path, "/old/"), http.StatusPermanentRedirect)
		default:
			sawAuth.Store(r.Header.Get("Authorization") == "Bearer "+srv.Token())
			w.Header().Set("Content-Type", "application/json")
			_, err := w.Write([]byte(`{"id":"1","name":"Moved"}`))
			assert.NoError(t, err)
		}
	}))
	t.Cleanup(ts.Close)

	c, err := topgg.New(srv.Token(), topgg.WithBaseURL(ts.URL+"/old"), topgg.WithHTTPClient(ts.Client()))
	require.NoError(t, err)
	p, err := c.Project(t.Context())
	require.NoError(t, err)
	require.Equal(t, "Moved", p.Name)
	require.True(t, sawAuth.Load())

	// A circle of redirects ends at net/http's limit of 10, not retried.
	loop, err := topgg.New(srv.Token(), topgg.WithBaseURL(ts.URL+"/loop"), topgg.WithHTTPClient(ts.Client()), topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	_, err = loop.Project(t.Context())
	require.ErrorContains(t, err, "stopped after 10 redirects")

	// The caller's own policy still applies after ours.
	hc := ts.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	own, err := topgg.New(srv.Token(), topgg.WithBaseURL(ts.URL+"/old"), topgg.WithHTTPClient(hc))
	require.NoError(t, err)
	_, err = own.Project(t.Context())
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusPermanentRedirect, apiErr.StatusCode)
}

// TestRedirectSecretInLocation: a Location that quotes the token does not bring it
// into the error.
func TestRedirectSecretInLocation(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	require.NoError(t, srv.Inject(topggtest.Fault{Status: http.StatusFound, Header: map[string]string{"Location": "https://" + srv.Token() + ".example.com/x?t=" + "{{authorization}}"}}))
	c, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	require.NoError(t, err)
	_, err = c.Project(t.Context())
	require.ErrorIs(t, err, topgg.ErrUnsafeRedirect)
	requireNoSecret(t, srv.Token(), err)
}
