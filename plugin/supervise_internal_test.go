package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
)

const (
	testWait = 10 * time.Second
	testTick = time.Millisecond
)

// runs counts the runs of a supervised job.
type runs struct {
	mu sync.Mutex
	n  int
}

func (r *runs) add() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return r.n
}

func (r *runs) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// superviseAsync runs the supervisor in a goroutine; its result arrives on the
// channel when it returns.
func superviseAsync(ctx context.Context, s supervisor, job func(context.Context) error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.run(ctx, "test-job", job) }()
	return done
}

func waitDone(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(testWait):
		t.Fatalf("supervise did not return: %s", what)
		return nil
	}
}

// newSupervisor is a supervisor as New makes it, with its own job states.
func newSupervisor(log *slog.Logger, c clock.Clock) supervisor {
	states := &jobStates{clock: c}
	states.begin()
	return supervisor{log: log, clock: c, states: states}
}

func newFake() *clock.Fake { return clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) }

// waitTimer waits until the supervisor waits on the fake clock.
func waitTimer(t *testing.T, fake *clock.Fake) {
	t.Helper()
	require.Eventually(t, func() bool { return fake.Timers() == 1 }, testWait, testTick, "the supervisor does not wait to restart")
}

// TestSuperviseRestartsWithBackoff: a job that errors, then panics, then
// succeeds is run three times; the first restart waits 0.5-1 s and the second
// 1-2 s (a doubling backoff with up to half off at random), on the injected
// clock; both failures are logged with the job's name; the panic does not escape.
func TestSuperviseRestartsWithBackoff(t *testing.T) {
	t.Parallel()
	var logs testlog.Buffer
	fake := newFake()
	s := newSupervisor(slog.New(slog.NewTextHandler(&logs, nil)), fake)
	var r runs
	done := superviseAsync(context.Background(), s, func(context.Context) error {
		switch r.add() {
		case 1:
			return errors.New("first run fails")
		case 2:
			panic("second run panics")
		default:
			return nil
		}
	})

	waitTimer(t, fake)
	fake.Advance(499 * time.Millisecond)
	require.Equal(t, 1, fake.Timers(), "the first restart waits at least 0.5 s")
	assert.Equal(t, 1, r.count())
	fake.Advance(501 * time.Millisecond)
	require.Eventually(t, func() bool { return r.count() == 2 }, testWait, testTick, "restarted after at most 1 s")

	waitTimer(t, fake)
	fake.Advance(999 * time.Millisecond)
	require.Equal(t, 1, fake.Timers(), "the second restart waits at least 1 s: the delay doubles")
	fake.Advance(1001 * time.Millisecond)
	require.NoError(t, waitDone(t, done, "a job that returned nil is done"))
	assert.Equal(t, 3, r.count(), "a job that returns nil is not restarted")

	out := logs.String()
	assert.Contains(t, out, `msg="job failed; restarting" job=test-job error="first run fails"`)
	assert.Contains(t, out, `msg="job panicked" job=test-job panic="second run panics"`)
	assert.Contains(t, out, "stack=", "a panic is logged with its stack")
}

// TestSuperviseBackoffResets: a job that ran longer than the longest delay
// before failing is restarted after the shortest delay again.
func TestSuperviseBackoffResets(t *testing.T) {
	t.Parallel()
	fake := newFake()
	s := newSupervisor(slog.New(slog.DiscardHandler), fake)
	var r runs
	ctx, cancel := context.WithCancel(context.Background())
	done := superviseAsync(ctx, s, func(context.Context) error {
		if r.add() == 3 {
			fake.Advance(2 * maxRestartDelay) // a long, good run
		}
		return errors.New("fails")
	})
	for n, limit := range []time.Duration{time.Second, 2 * time.Second, time.Second} {
		waitTimer(t, fake)
		fake.Advance(limit)
		require.Eventually(t, func() bool { return r.count() == n+2 }, testWait, testTick, "restart %d waits at most %s", n+1, limit)
	}
	cancel()
	require.NoError(t, waitDone(t, done, "cancelled"))
}

// TestSupervisePermanentNotRestarted: an error no retry mends (the service
// refused the token or the request) ends supervise with ErrJobFailed after one
// run; a transient service error, a rate limit and an error from elsewhere are
// restarted.
func TestSupervisePermanentNotRestarted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		err       error
		permanent bool
	}{
		{"refused token", fmt.Errorf("command sync: %w", &topgg.APIError{Op: "PUT commands", StatusCode: http.StatusUnauthorized}), true},
		{"refused request", &topgg.APIError{Op: "PUT commands", StatusCode: http.StatusUnprocessableEntity}, true},
		{"broken rule", &topgg.ValidationError{Field: "name", Problem: "too long", Rule: "1-32"}, true},
		{"config", &topgg.ConfigError{Field: "commands.Config.Session", Problem: "no source of commands"}, true},
		{"service error", &topgg.APIError{Op: "PUT commands", StatusCode: http.StatusBadGateway}, false},
		{"rate limit", &topgg.RateLimitError{Op: "PUT commands", RetryAfter: time.Second}, false},
		{"connection", &topgg.RequestError{Op: "PUT commands", Attempts: 2, Err: errors.New("refused")}, false},
		{"disk", errors.New("disk full"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs testlog.Buffer
			fake := newFake()
			s := newSupervisor(slog.New(slog.NewTextHandler(&logs, nil)), fake)
			var r runs
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := superviseAsync(ctx, s, func(context.Context) error { r.add(); return tc.err })
			if tc.permanent {
				err := waitDone(t, done, "a permanent failure ends supervise")
				require.ErrorIs(t, err, ErrJobFailed)
				require.ErrorIs(t, err, tc.err)
				assert.Equal(t, 1, r.count())
				assert.Zero(t, fake.Timers(), "no restart is scheduled")
				assert.Contains(t, logs.String(), "not restarted")
				return
			}
			waitTimer(t, fake)
			fake.Advance(minRestartDelay)
			require.Eventually(t, func() bool { return r.count() == 2 }, testWait, testTick, "restarted")
			cancel()
			require.NoError(t, waitDone(t, done, "cancelled"))
		})
	}
}

// TestSuperviseStopsOnCancel: cancelling the context stops supervise while it
// waits to restart a failed job, and while the job runs; a job that returns
// an error because of the cancel is not restarted.
func TestSuperviseStopsOnCancel(t *testing.T) {
	t.Parallel()

	t.Run("during backoff", func(t *testing.T) {
		t.Parallel()
		fake := newFake()
		ctx, cancel := context.WithCancel(context.Background())
		var r runs
		done := superviseAsync(ctx, newSupervisor(slog.New(slog.DiscardHandler), fake), func(context.Context) error {
			r.add()
			panic("always")
		})
		waitTimer(t, fake)
		cancel() // the fake clock never moves: only the cancel can end the wait
		require.NoError(t, waitDone(t, done, "cancelled during the backoff"))
		assert.Equal(t, 1, r.count())
	})

	t.Run("while running", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		var r runs
		done := superviseAsync(ctx, newSupervisor(slog.New(slog.DiscardHandler), newFake()), func(ctx context.Context) error {
			r.add()
			<-ctx.Done()
			return ctx.Err()
		})
		require.Eventually(t, func() bool { return r.count() == 1 }, testWait, testTick)
		cancel()
		require.NoError(t, waitDone(t, done, "cancelled while the job runs"))
		assert.Equal(t, 1, r.count())
	})

	t.Run("before start", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var r runs
		done := superviseAsync(ctx, newSupervisor(slog.New(slog.DiscardHandler), newFake()), func(context.Context) error { r.add(); return nil })
		require.NoError(t, waitDone(t, done, "context already done"))
		assert.Zero(t, r.count())
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
			var logs testlog.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			var r runs
			s := newSupervisor(slog.New(slog.NewTextHandler(&logs, nil)), newFake())
			done := superviseAsync(ctx, s, func(ctx context.Context) error {
				r.add()
				<-ctx.Done()
				return tc.err
			})
			require.Eventually(t, func() bool { return r.count() == 1 }, testWait, testTick)
			cancel()
			require.NoError(t, waitDone(t, done, "cancelled while the job runs"))
			assert.Equal(t, 1, r.count(), "not restarted")
			if tc.logged {
				assert.Contains(t, logs.String(),
					`level=WARN msg="job stopped with an error" job=test-job error="handlers were still running and were cancelled"`)
			} else {
				assert.Empty(t, logs.String())
			}
		})
	}
}

// TestSuperviseStopIsBoundedWhenAJobIgnoresItsContext: a job that blocks on a
// channel and never looks at its context holds the supervisor's return for
// stopWait on its clock, not for ever; the job's late error is dropped (no
// restart, nothing logged after the return).
func TestSuperviseStopIsBoundedWhenAJobIgnoresItsContext(t *testing.T) {
	t.Parallel()
	fake := newFake()
	var logs testlog.Buffer
	const stopWait = time.Minute
	s := newSupervisor(slog.New(slog.NewTextHandler(&logs, nil)), fake)
	s.stopWait = stopWait
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	jobDone := make(chan struct{})
	t.Cleanup(func() { unblock(); <-jobDone }) // the job left behind ends before goleak looks
	var r runs
	ctx, cancel := context.WithCancel(context.Background())
	done := superviseAsync(ctx, s, func(context.Context) error {
		defer close(jobDone)
		r.add()
		<-release // ignores ctx
		return errors.New("late failure")
	})
	require.Eventually(t, func() bool { return r.count() == 1 }, testWait, testTick)
	cancel()
	// The supervisor waits on its clock: not before stopWait...
	require.Eventually(t, func() bool { return fake.Timers() == 1 }, testWait, testTick)
	fake.Advance(stopWait - time.Second)
	select {
	case <-done:
		t.Fatal("the supervisor returned before stopWait")
	case <-time.After(50 * time.Millisecond):
	}
	// ...and at it.
	fake.Advance(time.Second)
	require.NoError(t, waitDone(t, done, "a job ignoring its context held the stop"))
	assert.Contains(t, logs.String(), "job ignored the stop")
	assert.Contains(t, logs.String(), "test-job")

	unblock()
	<-jobDone
	assert.Equal(t, 1, r.count(), "not restarted")
	assert.Equal(t, 0, strings.Count(logs.String(), "late failure"), "the late result is dropped")
}

// TestLivenessFailsOnACrashLoop: a job that failed crashLoop times in a row
// fails the liveness check; one failure fewer does not.
func TestLivenessFailsOnACrashLoop(t *testing.T) {
	t.Parallel()
	fake := newFake()
	s := newSupervisor(slog.New(slog.DiscardHandler), fake)
	states := s.states
	ctx, cancel := context.WithCancel(context.Background())
	var r runs
	done := superviseAsync(ctx, s, func(context.Context) error {
		r.add()
		return errors.New("fails")
	})
	for n := 1; n <= crashLoop; n++ {
		waitTimer(t, fake) // failed n times, waiting to restart
		if err := states.check(ctx); n < crashLoop {
			require.NoError(t, err, "after %d failures", n)
		} else {
			require.EqualError(t, err, fmt.Sprintf("job test-job failed %d times in a row", crashLoop))
		}
		fake.Advance(maxRestartDelay)
		require.Eventually(t, func() bool { return r.count() == n+1 }, testWait, testTick, "restarted")
	}
	cancel()
	require.NoError(t, waitDone(t, done, "a cancelled supervisor returns"))
}
