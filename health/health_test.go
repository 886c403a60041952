package health_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/health"
	"github.com/dblkit/go-topgg/internal/testkit"
)

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	return rec.Code, string(body)
}

func TestProbe(t *testing.T) {
	t.Parallel()
	failing := errors.New("not yet:\nshard 2")
	var fail bool
	h, err := health.NewProbe("readyz",
		health.Check{Name: "shards", Func: func(context.Context) error {
			if fail {
				return failing
			}
			return nil
		}},
		health.Check{Name: "token", Func: func(context.Context) error { return nil }},
	)
	require.NoError(t, err)

	code, body := get(t, h, "/readyz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok\n", body)
	code, body = get(t, h, "/readyz?verbose")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "[+]shards ok\n[+]token ok\nok\n", body)

	fail = true
	code, body = get(t, h, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "[-]shards failed\nreadyz check failed\n", body)
	code, body = get(t, h, "/readyz?verbose=1")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "[-]shards failed: not yet: shard 2\n[+]token ok\nreadyz check failed\n", body)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/readyz", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}

func TestPanickingCheckFails(t *testing.T) {
	t.Parallel()
	h, err := health.NewProbe("livez", health.Check{Name: "jobs", Func: func(context.Context) error { panic("boom") }})
	require.NoError(t, err)
	code, body := get(t, h, "/livez?verbose")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "[-]jobs failed: panic: boom")
}

func TestNoChecksPasses(t *testing.T) {
	t.Parallel()
	h, err := health.NewProbe("livez")
	require.NoError(t, err)
	code, _ := get(t, h, "/livez")
	require.Equal(t, http.StatusOK, code)
}

func TestNewProbeRefusesBadChecks(t *testing.T) {
	t.Parallel()
	ok := func(context.Context) error { return nil }
	for _, checks := range [][]health.Check{
		{{Name: "", Func: ok}},
		{{Name: "Bad Name", Func: ok}},
		{{Name: "a"}},
		{{Name: "a", Func: ok}, {Name: "a", Func: ok}},
	} {
		_, err := health.NewProbe("readyz", checks...)
		require.ErrorIs(t, err, health.ErrInvalidCheck)
	}
	_, err := health.NewProbe("")
	require.ErrorIs(t, err, health.ErrInvalidCheck)
}

// stuckCheck sleeps without looking at its context, as a check blocked in a
// call that takes none would, until release is closed (or a minute passed).
type stuckCheck struct {
	release chan struct{}
	calls   atomic.Int32 // calls started
	running atomic.Int32 // calls not returned
}

func (s *stuckCheck) check(context.Context) error {
	s.calls.Add(1)
	s.running.Add(1)
	defer s.running.Add(-1)
	select {
	case <-s.release:
	case <-time.After(time.Minute):
	}
	return nil
}

// probeOnce GETs url with a real client bounded well past the probe's
// bound, and returns the status, the body and the time the answer took.
func probeOnce(t *testing.T, client *http.Client, url string) (int, string, time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := client.Get(url)
	require.NoError(t, err, "no answer: the probe hung past its bound")
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), time.Since(start)
}

// TestProbeAnswersWithinItsBound: a check that ignores its context does not
// hold the answer past the bound, probe after probe, and is not started
// again while it runs: the goroutines it leaves behind are one, not one per
// probe. Once it returns, the next probe runs it afresh. (Not parallel: it
// counts the process's goroutines.)
func TestProbeAnswersWithinItsBound(t *testing.T) {
	const bound = 100 * time.Millisecond
	stuck := &stuckCheck{release: make(chan struct{})}
	p, err := health.NewProbe("readyz",
		health.Check{Name: "stuck", Func: stuck.check},
		health.Check{Name: "fine", Func: func(context.Context) error { return nil }})
	require.NoError(t, err)
	health.SetTimeout(p, bound)
	srv := httptest.NewServer(p)
	released := sync.OnceFunc(func() { close(stuck.release) })
	t.Cleanup(func() { released(); srv.Close() })
	client := &http.Client{Timeout: 5 * time.Second}
	t.Cleanup(client.CloseIdleConnections)

	probeOnce(t, client, srv.URL) // the connection's goroutines, and the first call
	before := runtime.NumGoroutine()
	for i := range 10 {
		code, body, took := probeOnce(t, client, srv.URL+"?verbose")
		assert.Equal(t, http.StatusServiceUnavailable, code, "probe %d", i)
		assert.Less(t, took, bound+time.Second, "probe %d answered after %v", i, took)
		assert.Contains(t, body, "[-]stuck failed: still running since an earlier probe")
		assert.Contains(t, body, "[+]fine ok")
	}
	assert.Equal(t, int32(1), stuck.calls.Load(), "a check still running is not started again")
	assert.Equal(t, int32(1), stuck.running.Load())
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "goroutines left behind by 10 probes")

	// Many probes at once: each answers in time, and none starts a call.
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			resp, err := client.Get(srv.URL)
			if assert.NoError(t, err) {
				_ = resp.Body.Close()
				assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), stuck.calls.Load())

	// The call returns (its late result dropped): the next probe starts one
	// afresh, which passes.
	released()
	require.Eventually(t, func() bool {
		code, _, _ := probeOnce(t, client, srv.URL)
		return code == http.StatusOK
	}, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, int32(0), stuck.running.Load())
	assert.GreaterOrEqual(t, stuck.calls.Load(), int32(2))
}

// A check that honours its context fails at the bound with the context's
// error, and its probe answers then.
func TestSlowCheckFailsAtTheBound(t *testing.T) {
	t.Parallel()
	p, err := health.NewProbe("livez", health.Check{Name: "slow", Func: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}})
	require.NoError(t, err)
	health.SetTimeout(p, 50*time.Millisecond)
	names, errs, ok := health.Run(context.Background(), p)
	require.False(t, ok)
	require.Equal(t, []string{"slow"}, names)
	require.ErrorIs(t, errs[0], context.DeadlineExceeded)
}

// A Probe not made by NewProbe is invalid (DESIGN's zero-value policy): it
// panics rather than answer 200 "ok" with no check.
func TestZeroOrNilProbePanics(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]*health.Probe{"zero": {}, "nil": nil} {
		assert.Panics(t, func() { health.Run(context.Background(), p) }, name)
	}
}

// TestProbePrintsByName: fmt of a Probe walked its checks' calls in flight
// unlocked; under every verb it prints its name alone.
func TestProbePrintsByName(t *testing.T) {
	t.Parallel()
	p, err := health.NewProbe("readyz", health.Check{Name: "db", Func: func(context.Context) error { return nil }})
	require.NoError(t, err)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		require.Equal(t, "health.Probe", fmt.Sprintf(verb, p), verb)
	}
}

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
	require.NoError(t, testkit.Recv(t, ran, "Run did not return after its context was done"))
	require.Error(t, srv.Run(t.Context()), "a second Run")
	l, err := net.Listen("tcp", srv.Addr().String())
	require.NoError(t, err, "the port is still held")
	require.NoError(t, l.Close())
}

// TestServerListenErrors: a taken port fails Listen naming nothing secret;
// without metrics there is no /metrics; misuse is an error; Run with a done
// context frees the port.
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
	done, cancel := context.WithCancel(t.Context())
	cancel()
	require.NoError(t, srv.Run(done))
	require.Error(t, srv.Run(t.Context()), "a second Run")
	l, err := net.Listen("tcp", srv.Addr().String())
	require.NoError(t, err, "Run left the port held")
	require.NoError(t, l.Close())
}
