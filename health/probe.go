package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc/panics"
)

// Timeout bounds one probe: a check with no answer by then fails. At most one
// call of each check is ever in flight, even of one that ignores its context.
const Timeout = 5 * time.Second

// Check is one named condition of a probe.
type Check struct {
	// Name names the check in the answer: lower-case letters, digits, '_'
	// and '-', as in "shards" or "token".
	Name string
	// Func returns nil when the condition holds, else why not, with no secret
	// (a verbose answer shows it). It must honour ctx and be safe for
	// concurrent use; a panic in it fails the check.
	Func func(ctx context.Context) error
}

// ErrInvalidCheck matches [NewProbe]'s errors for an invalid or duplicate check.
var ErrInvalidCheck = errors.New("health: invalid check")

// Probe is an http.Handler that answers a liveness or readiness probe from
// its checks. Make it with [NewProbe]; it is safe for concurrent use.
type Probe struct {
	name    string // "livez", "readyz": the last line of a failed answer
	checks  []*check
	timeout time.Duration // Timeout; tests shorten it (export_test.go)
}

// check is a Check and its call in flight, if one is.
type check struct {
	Check
	mu     sync.Mutex
	flight *flight // nil when no call runs
}

// flight is one call of a check: err is set before done is closed.
type flight struct {
	done    chan struct{}
	err     error
	started time.Time
}

// NewProbe returns a Probe named name (as in "readyz") of checks (none: it always
// passes); a bad or repeated name or a nil Func is an [ErrInvalidCheck].
func NewProbe(name string, checks ...Check) (*Probe, error) {
	if !validName(name) {
		return nil, fmt.Errorf("%w: probe name %q: want lower-case letters, digits, '_' or '-'", ErrInvalidCheck, name)
	}
	seen := make(map[string]bool, len(checks))
	p := &Probe{name: name, timeout: Timeout}
	for i, c := range checks {
		switch {
		case !validName(c.Name):
			return nil, fmt.Errorf("%w: checks[%d]: name %q: want lower-case letters, digits, '_' or '-'", ErrInvalidCheck, i, c.Name)
		case c.Func == nil:
			return nil, fmt.Errorf("%w: checks[%d] (%s): nil Func", ErrInvalidCheck, i, c.Name)
		case seen[c.Name]:
			return nil, fmt.Errorf("%w: checks[%d]: name %q given twice", ErrInvalidCheck, i, c.Name)
		}
		seen[c.Name] = true
		p.checks = append(p.checks, &check{Check: c})
	}
	return p, nil
}

func validName(s string) bool {
	return s != "" && len(s) <= 64 && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == ""
}

// run runs every check within the timeout and returns their errors, in
// order (nil: passed), and whether all passed.
func (p *Probe) run(ctx context.Context) ([]error, bool) {
	if p.name == "" {
		panic("health: Probe not made by health.NewProbe") // else it would pass with no check
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	waits := make([]func() error, len(p.checks))
	for i, c := range p.checks {
		waits[i] = c.start(ctx)
	}
	errs := make([]error, len(p.checks))
	for i, wait := range waits {
		errs[i] = wait()
	}
	return errs, !slices.ContainsFunc(errs, func(err error) bool { return err != nil })
}

// start starts a call of c with ctx, or joins the call still running, and
// returns the wait for its result.
func (c *check) start(ctx context.Context) func() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.flight; f != nil {
		return func() error { return f.wait(ctx, true) }
	}
	f := &flight{done: make(chan struct{}), started: time.Now()}
	c.flight = f
	// The call outlives its request, for a probe that joins it.
	deadline, _ := ctx.Deadline()
	cctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	go func() {
		defer cancel()
		err := call(cctx, c.Func)
		c.mu.Lock()
		f.err, c.flight = err, nil
		c.mu.Unlock()
		close(f.done)
	}()
	return func() error { return f.wait(ctx, false) }
}

// wait returns f's result, or, once ctx is done, why it has none.
func (f *flight) wait(ctx context.Context, joined bool) error {
	select { // a call that answered counts, even if the bound passed since
	case <-f.done:
		return f.err
	default:
	}
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
	}
	if joined {
		return fmt.Errorf("still running since an earlier probe, %s ago: %w", time.Since(f.started).Round(time.Millisecond), ctx.Err())
	}
	return fmt.Errorf("no answer in time: %w", ctx.Err())
}

// call runs one check; a panic or a done context fails it.
func call(ctx context.Context, f func(context.Context) error) error {
	var err error
	if rec := panics.Try(func() { err = f(ctx) }); rec != nil {
		return fmt.Errorf("panic: %v", rec.Value)
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return err
}

// ServeHTTP answers GET and HEAD within [Timeout]: 200 when every check
// passes, else 503 naming the failed (?verbose: every check); others get 405.
func (p *Probe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	errs, ok := p.run(r.Context())
	_, verbose := r.URL.Query()["verbose"]
	var b strings.Builder
	for i, err := range errs {
		switch name := p.checks[i].Name; {
		case err == nil && verbose:
			fmt.Fprintf(&b, "[+]%s ok\n", name)
		case err != nil && verbose:
			oneLine := strings.NewReplacer("\r", " ", "\n", " ").Replace(err.Error()) // keeps the error on its line
			fmt.Fprintf(&b, "[-]%s failed: %s\n", name, oneLine)
		case err != nil:
			fmt.Fprintf(&b, "[-]%s failed\n", name)
		}
	}
	status := http.StatusOK
	if ok {
		b.WriteString("ok\n")
	} else {
		status = http.StatusServiceUnavailable
		fmt.Fprintf(&b, "%s check failed\n", p.name)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(b.String()))
	}
}

// Format prints the Probe as "health.Probe" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*Probe) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "health.Probe") }
