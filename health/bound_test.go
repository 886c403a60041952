package health_test

import (
	"context"
	"io"
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
)

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
