package plugin

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/dblkit/go-topgg/internal/backoff"
)

// supervise runs job until ctx is done. A job that returns an error or panics is
// logged and started again after a backoff that doubles up to maxRestartDelay and
// resets once a run lasted longer than it; a job that returns nil is done.
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
		} else if err == nil || ctx.Err() != nil {
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
