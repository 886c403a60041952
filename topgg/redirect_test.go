package topgg_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

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
