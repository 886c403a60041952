package voterperks

import (
	"context"
	"log/slog"

	"github.com/sourcegraph/conc/panics"
)

// text returns what the bot's text function f says, or fallback's text when
// f panics (logged with its stack) or has not answered when ctx ends: an
// interaction's answer keeps Discord's deadline whatever f does. A f that
// ignores ctx runs on alone; its late answer is dropped.
func (p *Perks) text(ctx context.Context, name string, f, fallback func() string) string {
	if ctx.Err() != nil {
		return fallback()
	}
	got := make(chan string, 1)
	go func() {
		var s string
		if rec := panics.Try(func() { s = f() }); rec != nil {
			p.log.Error("a text function panicked; answered without it", slog.String("text", name),
				slog.Any("panic", rec.Value), slog.String("stack", string(rec.Stack)))
			s = fallback()
		}
		got <- s
	}()
	select {
	case s := <-got:
		return s
	case <-ctx.Done():
		p.log.Warn("a text function did not answer in time (does it honour ctx?); answered without it", slog.String("text", name))
		return fallback()
	}
}
