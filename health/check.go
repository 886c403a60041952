package health

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sourcegraph/conc/panics"
)

// Timeout bounds the checks of one probe: a check still running then fails
// with its context's error.
const Timeout = 5 * time.Second

// Check is one named condition of a probe.
type Check struct {
	// Name names the check in the answer: lower-case letters, digits, '_'
	// and '-', as in "shards" or "token".
	Name string
	// Func returns nil when the condition holds, else why not. Its error is
	// shown in a verbose answer, so it must carry no secret. It must honour
	// ctx and be safe for concurrent use; a panic in it fails the check.
	Func func(ctx context.Context) error
}

// Result is the outcome of one check.
type Result struct {
	Name string
	Err  error // nil: passed
}

// ErrInvalidCheck matches the errors of [NewHandler] for a check without a
// valid name or function, or a name given twice, and the failed result of a
// Handler not made by NewHandler.
var ErrInvalidCheck = errors.New("health: invalid check")

// Handler answers a probe from its checks. Make it with [NewHandler]; it is
// safe for concurrent use.
type Handler struct {
	probe  string // "livez", "readyz": the last line of a failed answer
	checks []Check
}

// NewHandler returns a Handler named probe (as in "readyz", for its answer)
// that runs checks, in order, on every request. It fails, matching
// [ErrInvalidCheck], for a check without a valid name or function, or a name
// given twice. No check at all is valid: the probe always passes.
func NewHandler(probe string, checks ...Check) (*Handler, error) {
	if !validName(probe) {
		return nil, fmt.Errorf("%w: probe name %q: want lower-case letters, digits, '_' or '-'", ErrInvalidCheck, probe)
	}
	seen := make(map[string]bool, len(checks))
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
	}
	return &Handler{probe: probe, checks: append([]Check(nil), checks...)}, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b >= 'a' && b <= 'z', b >= '0' && b <= '9', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// errNotMade fails the one check of a nil or zero Handler.
var errNotMade = fmt.Errorf("%w: Handler not made by health.NewHandler", ErrInvalidCheck)

// Run runs every check, in order, within [Timeout], and returns their
// results and whether all passed. A nil or zero Handler (not made by
// [NewHandler]) fails, with one result named "handler": a probe that passes
// without having been set up would hide the mistake.
func (h *Handler) Run(ctx context.Context) (results []Result, ok bool) {
	if h == nil || h.probe == "" {
		return []Result{{Name: "handler", Err: errNotMade}}, false
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	results = make([]Result, len(h.checks))
	ok = true
	for i, c := range h.checks {
		results[i] = Result{Name: c.Name, Err: runCheck(ctx, c)}
		ok = ok && results[i].Err == nil
	}
	return results, ok
}

// runCheck runs one check; a panic or a done context fails it.
func runCheck(ctx context.Context, c Check) error {
	var err error
	if rec := panics.Try(func() { err = c.Func(ctx) }); rec != nil {
		return fmt.Errorf("panic: %v", rec.Value)
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return err
}

// ServeHTTP answers GET and HEAD: 200 when every check passes, else 503.
// The body names the failed checks; with ?verbose (any value), every check
// and the reason of each failure. Other methods get 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	results, ok := h.Run(r.Context())
	_, verbose := r.URL.Query()["verbose"]
	var b strings.Builder
	for _, res := range results {
		switch {
		case res.Err == nil && verbose:
			fmt.Fprintf(&b, "[+]%s ok\n", res.Name)
		case res.Err != nil && verbose:
			fmt.Fprintf(&b, "[-]%s failed: %s\n", res.Name, oneLine(res.Err.Error()))
		case res.Err != nil:
			fmt.Fprintf(&b, "[-]%s failed\n", res.Name)
		}
	}
	status := http.StatusOK
	if ok {
		b.WriteString("ok\n")
	} else {
		status = http.StatusServiceUnavailable
		fmt.Fprintf(&b, "%s check failed\n", h.name())
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(b.String()))
	}
}

// oneLine keeps an error on its line of the answer.
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// name is the probe's name, "health" for a nil or zero Handler.
func (h *Handler) name() string {
	if h == nil || h.probe == "" {
		return "health"
	}
	return h.probe
}
