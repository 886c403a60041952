package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuf is a log sink safe for the supervised goroutine and the test.
type syncBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runs records when a supervised job was started.
type runs struct {
	mu sync.Mutex
	at []time.Time
}

func (r *runs) add() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = append(r.at, time.Now())
	return len(r.at)
}

func (r *runs) times() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.at...)
}

// superviseAsync runs supervise in a goroutine and returns a channel closed
// when it returns.
func superviseAsync(ctx context.Context, log *slog.Logger, job func(context.Context) error) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		supervise(ctx, log, "test-job", job)
	}()
	return done
}

func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("supervise did not return: %s", what)
	}
}

// TestSuperviseRestartsWithBackoff: a job that errors, then panics, then
// succeeds is run three times, with a backoff that doubles (1s, then 2s), and
// both failures are logged with the job's name; the panic does not escape.
func TestSuperviseRestartsWithBackoff(t *testing.T) {
	t.Parallel()
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var r runs
	done := superviseAsync(context.Background(), log, func(context.Context) error {
		switch r.add() {
		case 1:
			return errors.New("first run fails")
		case 2:
			panic("second run panics")
		default:
			return nil
		}
	})
	waitDone(t, done, "a job that returned nil is done")

	at := r.times()
	require.Len(t, at, 3, "a job that returns nil is not restarted")
	assert.GreaterOrEqual(t, at[1].Sub(at[0]), time.Second, "first restart waits the minimum delay")
	assert.GreaterOrEqual(t, at[2].Sub(at[1]), 2*time.Second, "the delay doubles")
	assert.Less(t, at[2].Sub(at[0]), 6*time.Second)
	out := logs.String()
	assert.Contains(t, out, `msg="job failed; restarting" job=test-job error="first run fails" in=1s`)
	assert.Contains(t, out, `msg="job panicked; restarting" job=test-job error="panic: second run panics"`)
	assert.Contains(t, out, "stack=", "a panic is logged with its stack")
}

// TestSuperviseStopsOnCancel: cancelling the context stops supervise while it
// waits to restart a failed job, and while the job runs; a job that returns
// an error because of the cancel is not restarted.
func TestSuperviseStopsOnCancel(t *testing.T) {
	t.Parallel()

	t.Run("during backoff", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		var r runs
		done := superviseAsync(ctx, slog.New(slog.DiscardHandler), func(context.Context) error {
			r.add()
			panic("always")
		})
		require.Eventually(t, func() bool { return len(r.times()) == 1 }, 5*time.Second, time.Millisecond)
		start := time.Now()
		cancel()
		waitDone(t, done, "cancelled during the backoff")
		assert.Less(t, time.Since(start), 500*time.Millisecond, "the backoff wait honours the context")
		assert.Len(t, r.times(), 1)
	})

	t.Run("while running", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		var r runs
		done := superviseAsync(ctx, slog.New(slog.DiscardHandler), func(ctx context.Context) error {
			r.add()
			<-ctx.Done()
			return ctx.Err()
		})
		require.Eventually(t, func() bool { return len(r.times()) == 1 }, 5*time.Second, time.Millisecond)
		cancel()
		waitDone(t, done, "cancelled while the job runs")
		assert.Len(t, r.times(), 1)
	})

	t.Run("before start", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var r runs
		done := superviseAsync(ctx, slog.New(slog.DiscardHandler), func(context.Context) error { r.add(); return nil })
		waitDone(t, done, "context already done")
		assert.Empty(t, r.times())
	})
}

// TestSuperviseLogsStopError: an error a job returns once ctx is done (the
// vote poller had to cancel its handlers) is logged as a warning and the job
// is not restarted; a bare cancellation is not logged.
func TestSuperviseLogsStopError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		err    error
		logged bool
	}{
		{"stop error", errors.New("handlers were still running and were cancelled"), true},
		{"cancellation", fmt.Errorf("command sync: %w", context.Canceled), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs syncBuf
			log := slog.New(slog.NewTextHandler(&logs, nil))
			ctx, cancel := context.WithCancel(context.Background())
			var r runs
			done := superviseAsync(ctx, log, func(ctx context.Context) error {
				r.add()
				<-ctx.Done()
				return tc.err
			})
			require.Eventually(t, func() bool { return len(r.times()) == 1 }, 5*time.Second, time.Millisecond)
			cancel()
			waitDone(t, done, "cancelled while the job runs")
			assert.Len(t, r.times(), 1, "not restarted")
			if tc.logged {
				assert.Contains(t, logs.String(),
					`level=WARN msg="job stopped with an error" job=test-job error="handlers were still running and were cancelled"`)
			} else {
				assert.Empty(t, logs.String())
			}
		})
	}
}
