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
