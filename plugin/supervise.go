package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/dblkit/go-topgg/internal/backoff"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/term"
	"github.com/dblkit/go-topgg/topgg"
)

// Restart delays of the supervisor: the first restart waits about minRestartDelay,
// each further one about twice as long, up to maxRestartDelay; a run that lasted
// longer than maxRestartDelay starts the count again.
const (
	minRestartDelay = time.Second
	maxRestartDelay = time.Minute
)

// jobStopWait is how long, once Run's context is done, the supervisor waits
// for a job beyond what the job itself promises (the vote poller's grace
// period is added to it): a job still running then ignores its context (a
// caller's hook or store blocked without one), and the supervisor returns
// without it, leaving its goroutine behind (one per job at most) and
// dropping what it returns.
const jobStopWait = 30 * time.Second

// supervisor runs the plugin's jobs, each as Run(ctx) error, and restarts the
// ones that fail. It holds no lock and keeps no state between calls.
type supervisor struct {
	log   *slog.Logger
	clock clock.Clock
	// states, when set, is told of each start and end, for liveness.
	states *jobStates
	// stopWait bounds the wait for a job once ctx is done (0: jobStopWait).
	stopWait time.Duration
}

// run runs job until ctx is done. A job that returns an error or panics is logged
// and run again after a backoff (internal/backoff over the supervisor's clock); a
// job that returns nil is done. A job that fails in a way no restart mends
// ([permanent]: the service refused the token or the request) is not run again:
// run returns its error wrapped in [ErrJobFailed], for Run to stop the others.
// Once ctx is done the job is not restarted, and an error it returns then (other
// than a context cancellation) is logged as a warning; run then returns nil.
func (s supervisor) run(ctx context.Context, name string, job func(context.Context) error) error {
	failures := 0
	for ctx.Err() == nil {
		started := s.clock.Now()
		s.states.started(name, failures)
		err := s.once(ctx, name, job)
		s.states.stopped(name, err != nil && ctx.Err() == nil)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			// The job was asked to stop, so it is not restarted; but an error it
			// returns while stopping (the vote poller had to cancel running
			// handlers, say) is news to the operator. A bare cancellation is just
			// how the stop reached a request in flight.
			// Nor is a fleet leader's term that ended under it (the check
			// that found it over cancelled ctx).
			if !errors.Is(err, context.Canceled) && !errors.Is(err, term.ErrOver) {
				s.log.Warn("job stopped with an error", "job", name, "error", err)
			}
			return nil
		case errors.Is(err, ErrJobFailed):
			return err // a job this one supervises (a fleet leader's) failed for good; already logged
		case permanent(err):
			s.log.Error("job failed and is not restarted: no retry mends this error", "job", name, "error", err)
			// Not named again here: the log line above says job=name, and
			// the job's error says its package ("commands: publishing...").
			return fmt.Errorf("%w: %w", ErrJobFailed, err)
		}
		if s.clock.Now().Sub(started) > maxRestartDelay {
			failures = 0 // it ran well for a while: this is a new failure, not a loop
		}
		failures++
		delay := backoff.Exp(failures, minRestartDelay, maxRestartDelay)
		s.log.Error("job failed; restarting", "job", name, "error", err, "in", delay)
		if clock.Sleep(ctx, s.clock, delay) != nil {
			return nil
		}
	}
	return nil
}

// once runs job one time and turns a panic into an error, logged with its
// stack. Once ctx is done it waits for the job at most stopWait: a job that
// ignores its context is left behind, and what it returns later is dropped.
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
	wait := s.stopWait
	if wait <= 0 {
		wait = jobStopWait
	}
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

// permanent reports an error that no restart mends: the service answered and
// refused (topgg.Retryable is false for an answer it classifies: a 4xx other than
// 408 and 429, an invalid token, a broken rule, a body that could not be read
// from a 2xx). Errors that did not come from the service (a panic, a disk error)
// and the ones topgg.Retryable calls worth retrying are restarted.
func permanent(err error) bool {
	if err == nil || topgg.Retryable(err) {
		return false
	}
	var (
		api *topgg.APIError
		ve  *topgg.ValidationError
		de  *topgg.DecodeError
	)
	return errors.As(err, &api) || errors.As(err, &ve) || errors.As(err, &de) || errors.Is(err, topgg.ErrUnauthorized)
}
