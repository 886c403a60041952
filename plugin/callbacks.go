package plugin

import (
	"context"
	"fmt"

	"github.com/sourcegraph/conc/panics"

	"github.com/dblkit/go-topgg/commands"
)

// callOnSync tells the CommandSyncHandler (the metrics' and the caller's) of
// a sync attempt, containing a panic of it: the attempt's outcome stands. A
// panic reaching the supervisor would make a finished sync a failed job,
// restarted with backoff, and the commands published again at every restart.
// The log names the handler, without a stack.
func (p *Plugin) callOnSync(ctx context.Context, r commands.Result, err error) {
	if p.opts.onSync == nil {
		return
	}
	if rec := panics.Try(func() { p.opts.onSync(ctx, r, err) }); rec != nil {
		p.log.Error("CommandSyncHandler panicked", "callback", "CommandSyncHandler", "panic", fmt.Sprint(rec.Value))
	}
}
