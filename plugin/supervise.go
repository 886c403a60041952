package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/dblkit/go-topgg/internal/backoff"
)

// supervise runs job until ctx is done. A job that returns an error or panics is
// logged and started again after a backoff that doubles up to maxRestartDelay and
// resets once a run lasted longer than it; a job that returns nil is done. Once ctx
// is done the job is not restarted, and an error it returns then (other than a
// context cancellation) is logged as a warning.
func supervise(ctx context.Context, log *slog.Logger, name string, job func(context.Context) error) {
	const (
		minRestartDelay = time.Second
		maxRestartDelay = time.Minute
	)
	delay := minRestartDelay
	for ctx.Err() == nil {
		started := time.Now()
		var err error
		if r := panics.Try(func() { err = job(ctx) }); r != nil {
			err = fmt.Errorf("panic: %v", r.Value)
			log.Error("job panicked; restarting", "job", name, "error", err, "stack", string(r.Stack))
		} else if err == nil {
			return
		} else if ctx.Err() != nil {
			// The job was asked to stop, so it is not restarted; but an error
			// it returns while stopping (the vote poller had to cancel running
			// handlers, say) is news to the operator. A bare cancellation is
			// just how the stop reached a request in flight.
			if !errors.Is(err, context.Canceled) {
				log.Warn("job stopped with an error", "job", name, "error", err)
			}
			return
		} else {
			log.Error("job failed; restarting", "job", name, "error", err, "in", delay)
		}
		if time.Since(started) > maxRestartDelay {
			delay = minRestartDelay
		}
		if backoff.Sleep(ctx, delay) != nil {
			return
		}
		delay = min(2*delay, maxRestartDelay)
	}
}
