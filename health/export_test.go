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
	errs, ok = p.run(ctx)
	for _, c := range p.checks {
		names = append(names, c.Name)
	}
	return names, errs, ok
}
