package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quick bounds what must happen at once once the context is done: far below
// the 20 s client timeout and the minute-long rate limits of these tests.
const quick = 5 * time.Second

// discordClient returns an HTTP client whose Discord REST calls go to srv, as
// the bot's do, with the gateway lookup tied to ctx.
func discordClient(ctx context.Context, srv *httptest.Server) *http.Client {
	return &http.Client{Timeout: 20 * time.Second,
		Transport: &gatewayLookup{ctx: ctx, next: newAPIRewriter(srv.URL+"/api/v9", http.DefaultTransport)}}
}

// TestGatewayLookupEndsWithContext: a silent gateway lookup ends when the
// bot's context does; other requests are not tied to it.
func TestGatewayLookupEndsWithContext(t *testing.T) {
	t.Parallel()
	arrived := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.URL.Path
		if r.URL.Path == "/api/v9/gateway" {
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	hc := discordClient(ctx, srv)

	done := make(chan error, 1)
	go func() {
		resp, err := hc.Get(discordgo.EndpointGateway)
		if err == nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	assert.Equal(t, "/api/v9/gateway", <-arrived)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(quick):
		t.Fatal("the gateway lookup outlived the context")
	}

	// Anything else still goes out: the shutdown's own requests need it.
	resp, err := hc.Get(discordgo.EndpointUser("@me"))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, "/api/v9/users/@me", <-arrived)
}

// TestGatewayLookupWaitsOut429: a 429 on the lookup is waited out (Retry-After)
// and the answer that follows is read whole; a long wait ends with the context.
func TestGatewayLookupWaitsOut429(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	retryAfter := make(chan string, 1)
	retryAfter <- "0.05"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", <-retryAfter)
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"retry_after":0.05}`)
			return
		}
		_, _ = io.WriteString(w, `{"url":"wss://gateway.example"}`)
	}))
	t.Cleanup(srv.Close)
	hc := discordClient(context.Background(), srv)
	resp, err := hc.Get(discordgo.EndpointGateway)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"url":"wss://gateway.example"}`, string(body))
	assert.Equal(t, int32(2), hits.Load())

	// A minute's wait, cut short by the context.
	hits.Store(0)
	retryAfter <- "60"
	ctx, cancel := context.WithCancel(context.Background())
	hc = discordClient(ctx, srv)
	done := make(chan error, 1)
	go func() {
		resp, err := hc.Get(discordgo.EndpointGateway)
		if err == nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return hits.Load() == 1 }, quick, time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(quick):
		t.Fatal("the wait on the 429 outlived the context")
	}
	assert.Equal(t, int32(1), hits.Load())
}

// TestRetryAfter: seconds, fractions, and nonsense, within bounds.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"2": 2 * time.Second, "0.5": 500 * time.Millisecond, "0": minRateLimitWait, "-3": minRateLimitWait,
		"1e9": maxRateLimitWait, "+Inf": maxRateLimitWait, "NaN": time.Second, "": time.Second, "soon": time.Second,
	} {
		assert.Equal(t, want, retryAfter(in), in)
	}
}

// TestFetchApplication: the application read waits out a 429 and honours the
// context while it waits, where discordgo would sleep through it.
func TestFetchApplication(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	limitFirst := make(chan string, 2) // retry_after of the next answer, a 429
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/api/v9/oauth2/applications/@me", r.URL.Path)
		hits.Add(1)
		select {
		case secs := <-limitFirst:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"message":"You are being rate limited.","retry_after":`+secs+`,"global":false}`)
		default:
			_, _ = io.WriteString(w, `{"id":"1100000000000000001","name":"bot"}`)
		}
	}))
	t.Cleanup(srv.Close)
	s, err := discordgo.New("Bot x")
	require.NoError(t, err)
	s.Client = discordClient(context.Background(), srv)
	log := slog.New(slog.DiscardHandler)

	limitFirst <- "0.05"
	app, err := fetchApplication(context.Background(), log, s)
	require.NoError(t, err)
	assert.Equal(t, "1100000000000000001", app.ID)
	assert.Equal(t, int32(2), hits.Load())

	limitFirst <- "60"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := fetchApplication(ctx, log, s); done <- err }()
	require.Eventually(t, func() bool { return hits.Load() == 3 }, quick, time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(quick):
		t.Fatal("the wait on the 429 outlived the context")
	}
}

// TestAbortPendingOpen: a gateway that accepts the connection and then says
// nothing keeps discordgo's Open waiting, with the session locked; abort makes
// it return, and no new connection is dialled after the context is done.
func TestAbortPendingOpen(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		conns []*websocket.Conn
	)
	accepted := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v9/gateway", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"url":"ws://`+r.Host+`/ws/"}`)
	})
	up := websocket.Upgrader{}
	mux.HandleFunc("GET /ws/", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if !assert.NoError(t, err) {
			return
		}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		accepted <- struct{}{}
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		srv.Close()
	})

	ctx, cancel := context.WithCancel(context.Background())
	s, err := discordgo.New("Bot x")
	require.NoError(t, err)
	d := newGatewayDialer(ctx)
	s.Client, s.Dialer = discordClient(ctx, srv), d.websocketDialer()
	s.ShouldReconnectOnError = false
	opened := make(chan error, 1)
	go func() { opened <- s.Open() }()
	select {
	case <-accepted:
	case <-time.After(quick):
		t.Fatal("the gateway was never dialled")
	}
	select {
	case err := <-opened:
		t.Fatalf("Open returned without a HELLO: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	d.abort()
	select {
	case err := <-opened:
		require.Error(t, err)
	case <-time.After(quick):
		t.Fatal("Open still waits after abort")
	}
	require.NoError(t, s.Close())

	_, err = d.dial(context.Background(), "tcp", srv.Listener.Addr().String())
	require.ErrorIs(t, err, context.Canceled, "a dial after the context is done")
}
