package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
)

// errPanicked marks the error contain makes of a callback's panic.
var errPanicked = errors.New("panicked")

// contain calls f and turns a panic in it into an error wrapping
// errPanicked, logged at Error with the callback's name, the panic's value
// and the stack. The stack goes to the log only: the peer gets the answer
// it would get for an error, and net/http never sees the panic (it would
// drop the connection, which Top.gg does not retry, and print the stack).
func (h *Receiver) contain(ctx context.Context, callback string, f func() error) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			h.log.ErrorContext(ctx, "webhook callback panicked",
				slog.String("callback", callback), slog.Any("panic", rec), slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("webhook: %s %w", callback, errPanicked)
		}
	}()
	return f()
}
