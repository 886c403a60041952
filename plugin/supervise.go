package plugin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
)

// Restart delays of the supervisor: doubling from minRestartDelay up to
// maxRestartDelay; a run longer than maxRestartDelay starts the count again.
const (
	minRestartDelay = time.Second
	maxRestartDelay = time.Minute
)

// jobStopWait is how long, after Run's stop, the supervisor waits for a job
// beyond the job's own promise; then the job is left behind, its result dropped.
const jobStopWait = 30 * time.Second

// supervisor runs the plugin's jobs and restarts the ones that fail; it holds
// no lock and no state between calls.
type supervisor struct {
	log      *slog.Logger
	clock    clock.Clock
	states   *jobStates    // told of each start and end, for liveness
	stopWait time.Duration // bounds the wait for a job once ctx is done (0: jobStopWait)
}

// run runs job until ctx is done: one that fails or panics is logged and run
// again after a backoff, one that returns nil is done, and one no restart
// mends ([permanent]) makes run return its error wrapped in [ErrJobFailed].
// After ctx is done, an error is logged and run returns nil.
func (s supervisor) run(ctx context.Context, name string, job func(context.Context) error) error {
	failures := 0
	for ctx.Err() == nil {
		started := s.clock.Now()
		s.states.set(name, jobState{running: true, started: started, failures: failures})
		err := s.once(ctx, name, job)
		stopped := jobState{} // done, or stopped: not a crash loop
		if err != nil && ctx.Err() == nil {
			stopped.failures = failures + 1
		}
		s.states.set(name, stopped)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			// Not restarted; an error while stopping is news, a bare
			// cancellation or an ended term is not.
			if !errors.Is(err, context.Canceled) && !errors.Is(err, clock.ErrTermOver) {
				s.log.Warn("job stopped with an error", "job", name, "error", err)
			}
			return nil
		case errors.Is(err, ErrJobFailed):
			return err // a job this one supervises (a fleet leader's) failed for good; already logged
		case permanent(err):
			s.log.Error("job failed and is not restarted: no retry mends this error", "job", name, "error", err)
			// The log line names the job; the error names its package.
			return fmt.Errorf("%w: %w", ErrJobFailed, err)
		}
		if s.clock.Now().Sub(started) > maxRestartDelay {
			failures = 0 // it ran well for a while: this is a new failure, not a loop
		}
		failures++
		delay := clock.Backoff(failures, minRestartDelay, maxRestartDelay)
		s.log.Error("job failed; restarting", "job", name, "error", err, "in", delay)
		if clock.Sleep(ctx, s.clock, delay) != nil {
			return nil
		}
	}
	return nil
}

// once runs job one time, turning a panic into an error logged with its stack.
// After ctx is done it waits for the job at most stopWait.
func (s supervisor) once(ctx context.Context, name string, job func(context.Context) error) error {
	result := make(chan error, 1) // buffered: a late result is dropped, not blocked on
	go func() {
		var err error
		if r := panics.Try(func() { err = job(ctx) }); r != nil {
			s.log.Error("job panicked", "job", name, "panic", fmt.Sprint(r.Value), "stack", string(r.Stack))
			err = fmt.Errorf("panic: %v", r.Value)
		}
		result <- err
	}()
	select {
	case err := <-result:
		return err
	case <-ctx.Done():
	}
	wait := cmp.Or(s.stopWait, jobStopWait)
	t := s.clock.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-result:
		return err
	case <-t.C():
		s.log.Error("job ignored the stop; returning without it (its goroutine is left behind, its result dropped)",
			"job", name, "waited", wait)
		return nil
	}
}

// permanent reports an error no restart mends: the service answered and
// refused (topgg.Retryable false), or a job's config is refused.
func permanent(err error) bool {
	_, api := errors.AsType[*topgg.APIError](err)
	_, ve := errors.AsType[*topgg.ValidationError](err)
	_, de := errors.AsType[*topgg.DecodeError](err)
	_, ce := errors.AsType[*topgg.ConfigError](err)
	return !topgg.Retryable(err) && (api || ve || de || ce || errors.Is(err, topgg.ErrUnauthorized))
}
