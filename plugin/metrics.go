package plugin

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/sourcegraph/conc/panics"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/voterewards"
)

// Observer is told what every job the plugin builds does, in the jobs' own
// typed values; *topggprom.Collector implements it. Its methods are called
// synchronously from the jobs' goroutines: they must be safe for concurrent
// use and quick; a panic is logged. Observe the client with topgg.WithObserver.
type Observer interface {
	// ObservePost: one post attempt of the server count.
	ObservePost(autopost.Result)
	// ObserveSync: one slash command sync, and its error.
	ObserveSync(commands.Result, error)
	// ObserveVote: one event of the vote pipeline.
	ObserveVote(voterewards.Event)
	// ObserveWebhook: one webhook delivery answered (nil: accepted), or a panic.
	ObserveWebhook(error)
	// ObserveLease: this process became the fleet's leader, or ceased to be.
	ObserveLease(fleet.LeaseState)
}

// WithMetrics tells o what every job does, beside the [WithOnPost] and
// [WithCommandSyncHandler] functions.
func WithMetrics(o Observer) Option {
	return setOption("WithMetrics", o, false, func(opts *options, o Observer) { opts.metrics = o })
}

// wireMetrics folds the Observer into the jobs' hooks; the calls beside a
// user's handler are contained here, so that the handler still runs.
func (o *options) wireMetrics() {
	m := o.metrics
	if m == nil {
		return
	}
	o.metricsPanicked = new(atomic.Bool)
	onPost := o.onPost
	o.onPost = func(r autopost.Result) {
		contain(o.logger, o.metricsPanicked, "ObservePost", func() { m.ObservePost(r) })
		if onPost != nil {
			onPost(r)
		}
	}
	onSync := o.onSync
	o.onSync = func(ctx context.Context, r commands.Result, err error) {
		contain(o.logger, o.metricsPanicked, "ObserveSync", func() { m.ObserveSync(r, err) })
		if onSync != nil {
			onSync(ctx, r, err)
		}
	}
	o.voteObserver = m.ObserveVote
	o.webhookObserver = m.ObserveWebhook
}

// leading tells the Observer, if any, whether this process leads the fleet.
func (p *Plugin) leading(yes bool) {
	if m := p.opts.metrics; m != nil {
		contain(p.log, p.opts.metricsPanicked, "ObserveLease", func() { m.ObserveLease(fleet.LeaseState{Leader: yes}) })
	}
}

// contain calls f, logging a panic in it rather than ending the caller.
func contain(log *slog.Logger, once *atomic.Bool, hook string, f func()) {
	if r := panics.Try(f); r != nil {
		attrs := []any{slog.String("hook", hook), slog.String("panic", fmt.Sprint(r.Value))}
		if once.CompareAndSwap(false, true) { // the stack once, not once per event
			attrs = append(attrs, slog.String("stack", string(r.Stack)))
		}
		log.Error("metrics Observer panicked", attrs...)
	}
}
