package health_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/internal/testkit"
)

// TestServerServesMetricsAndProbes: over real HTTP, /metrics answers GET
// from the handler given, /livez and /readyz from their checks; Run returns
// once its context is done and the port is free again.
func TestServerServesMetricsAndProbes(t *testing.T) {
	t.Parallel()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "topgg_up 1\n") })
	ok := health.Check{Name: "alive", Func: func(context.Context) error { return nil }}
	notYet := health.Check{Name: "shards", Func: func(context.Context) error { return errors.New("waiting for READY") }}
	srv, err := health.Listen(t.Context(), health.ServerConfig{Addr: "127.0.0.1:0", Metrics: metrics,
		Liveness: []health.Check{ok}, Readiness: []health.Check{ok, notYet}})
	require.NoError(t, err)
	base := "http://" + srv.Addr().String()
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx) }()

	code, body := testkit.Do(t, http.MethodGet, base+"/metrics", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "topgg_up 1\n", body)
	code, _ = testkit.Do(t, http.MethodPost, base+"/metrics", "")
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	code, body = testkit.Do(t, http.MethodGet, base+"/livez", "")
	assert.Equal(t, http.StatusOK, code, body)
	code, body = testkit.Do(t, http.MethodGet, base+"/readyz?verbose", "")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "[-]shards failed: waiting for READY")
	code, _ = testkit.Do(t, http.MethodGet, base+"/", "")
	assert.Equal(t, http.StatusNotFound, code)

	stop()
	select {
	case err := <-ran:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context was done")
	}
	require.Error(t, srv.Run(t.Context()), "a second Run")
	l, err := net.Listen("tcp", srv.Addr().String())
	require.NoError(t, err, "the port is still held")
	require.NoError(t, l.Close())
}

// TestServerListenErrors: a taken port fails Listen naming nothing secret;
// without metrics there is no /metrics; misuse is an error; Close frees the
// port of a Server never run.
func TestServerListenErrors(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = taken.Close() })
	_, err = health.Listen(t.Context(), health.ServerConfig{Addr: taken.Addr().String()})
	require.ErrorContains(t, err, "operations server")

	_, err = health.Listen(t.Context(), health.ServerConfig{})
	require.ErrorIs(t, err, health.ErrInvalidCheck)
	_, err = health.Listen(t.Context(), health.ServerConfig{Addr: "127.0.0.1:0", Readiness: []health.Check{{Name: "no func"}}})
	require.ErrorIs(t, err, health.ErrInvalidCheck)
	var zero health.Server
	require.ErrorIs(t, zero.Run(t.Context()), health.ErrInvalidCheck)

	srv, err := health.Listen(t.Context(), health.ServerConfig{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	require.NoError(t, srv.Close())
	require.Error(t, srv.Run(t.Context()), "Run after Close")
	l, err := net.Listen("tcp", srv.Addr().String())
	require.NoError(t, err, "Close left the port held")
	require.NoError(t, l.Close())
}

// TestServerStart: Start serves beyond any context until stop, which
// returns once the server is gone.
func TestServerStart(t *testing.T) {
	t.Parallel()
	srv, err := health.Listen(t.Context(), health.ServerConfig{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	stop := srv.Start()
	code, body := testkit.Do(t, http.MethodGet, "http://"+srv.Addr().String()+"/livez", "")
	assert.Equal(t, http.StatusOK, code, body)
	require.NoError(t, stop())
	l, err := net.Listen("tcp", srv.Addr().String())
	require.NoError(t, err, "the port is still held")
	require.NoError(t, l.Close())
}
