package topggtest_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

func newKitServer(t *testing.T, opts ...topggtest.Option) *topggtest.Server {
	t.Helper()
	srv, err := topggtest.NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// TestInjectMisuse: a fault that does nothing, a body with no answer to
// carry it, a negative count or wait, a bad status or a relative path is an
// error, and nothing is queued.
func TestInjectMisuse(t *testing.T) {
	t.Parallel()
	srv := newKitServer(t)
	for _, f := range []topggtest.Fault{
		{},
		{Path: "/v1/*"},
		{Delay: time.Second, Body: "{}"},
		{Status: 429, Times: -1},
		{Delay: -time.Second},
		{Status: 1000},
		{Path: "v1/projects/@me", Status: 500},
		{Method: "GET /v1", Status: 500},
	} {
		require.Error(t, srv.Inject(f), "%+v", f)
	}
	assert.Zero(t, srv.PendingFaults())
}

// TestNewClient: the client made by NewClient talks to the fake with its
// token; options given to it come after the server's.
func TestNewClient(t *testing.T) {
	t.Parallel()
	srv := newKitServer(t)
	client, err := srv.NewClient(topgg.WithUserAgent("kit-test/1"))
	require.NoError(t, err)
	p, err := client.Project(t.Context())
	require.NoError(t, err)
	assert.Equal(t, srv.Project().ID, p.ID)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "Bearer "+srv.Token(), reqs[0].Header.Get("Authorization"))
	assert.Contains(t, reqs[0].Header.Get("User-Agent"), "kit-test/1")
}

// TestHeldAndEndless: Held counts a request under a Delay until its client
// gives up; an Endless body goes on until the client stops reading.
func TestHeldAndEndless(t *testing.T) {
	t.Parallel()
	srv := newKitServer(t)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Delay: time.Hour}))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := getCtx(ctx, srv, "/v1/projects/@me"); done <- err }()
	require.Eventually(t, func() bool { return srv.Held() == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Eventually(t, func() bool { return srv.Held() == 0 }, 5*time.Second, time.Millisecond)

	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Body: `{"name":"`, Endless: true}))
	res, err := getCtx(t.Context(), srv, "/v1/projects/@me")
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	n, err := io.Copy(io.Discard, io.LimitReader(res.Body, 10<<20))
	require.NoError(t, err)
	assert.Equal(t, int64(10<<20), n, "the endless body ended")
}

// TestNewServerRefusesBadOptions: an invalid option is an error from
// NewServer, never a panic.
func TestNewServerRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, opt := range []topggtest.Option{
		topggtest.WithPageSize(0), topggtest.WithNow(nil),
		topggtest.WithWebhook("not a url", "whs_x"), topggtest.WithWebhook("http://127.0.0.1:1/", ""),
		topggtest.WithLegacyWebhook("http://127.0.0.1:1/", ""), topggtest.WithWebhookRetries(time.Second, -1),
	} {
		srv, err := topggtest.NewServer(opt)
		require.Error(t, err)
		require.Nil(t, srv)
	}
}

func getCtx(ctx context.Context, srv *topggtest.Server, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+srv.Token())
	return srv.Client().Do(req)
}
