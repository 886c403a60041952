package health

import (
	"context"
	"time"
)

// SetTimeout shortens p's bound, so that a test of it takes milliseconds.
func SetTimeout(p *Probe, d time.Duration) { p.timeout = d }

// Run runs p's checks as a request would: the failed names and errors, in
// order, and whether all passed.
func Run(ctx context.Context, p *Probe) (names []string, errs []error, ok bool) {
	results, ok := p.run(ctx)
	for _, r := range results {
		names, errs = append(names, r.name), append(errs, r.err)
	}
	return names, errs, ok
}
