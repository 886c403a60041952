package topggtest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/dblkit/go-topgg/internal/fault"
)

// Fault is a failure the server plays instead of (or before) its normal
// answer, with the same fields and rules as discordtest.Fault. Faults match
// in the order injected; a matching request uses one hit of the first match
// and is still recorded. In Body and Header values, "{{authorization}}" is the
// request's Authorization header and "{{hit}}" the number of this hit. Go's
// http.Transport retries an idempotent request once when a reused connection
// is dropped: use Times >= 2 when the client must see a Drop. A Delay alone is
// then served normally, an Endless alone answers 200.
type Fault struct {
	// Method matches the request method (case-insensitive); empty matches any.
	Method string
	// Path matches the path under the API root (without "/api"): exactly, or
	// as a prefix if it ends with '*' ("/v1/*"); empty matches any.
	Path string
	// Times is how many matching requests the fault hits; 0 means 1.
	Times int
	// Status is the answer's status code.
	Status int
	// RetryAfter sets Retry-After in whole seconds, rounded up; alone it
	// makes a 429 with the service's body.
	RetryAfter time.Duration
	// Drop closes the connection without answering.
	Drop bool
	// Delay holds the request before anything else, honouring its context.
	Delay time.Duration
	// Body replaces the service's body.
	Body string
	// ContentType goes with Body; default "application/json".
	ContentType string
	// Header adds headers to the answer, after Retry-After (so it can replace it).
	Header map[string]string
	// Endless makes the body go on after Body until the client goes or the server closes.
	Endless bool
}

// Inject queues a fault. It fails, queuing nothing, for a fault that does
// nothing, a Body or Header with no answer to carry it, a negative Times,
// Delay or RetryAfter, an invalid Status, or a Path not starting with '/'.
func (s *Server) Inject(f Fault) error {
	if err := s.faults.Add(fault.Fault(f)); err != nil {
		return fmt.Errorf("topggtest: inject: %w", err)
	}
	return nil
}

// PendingFaults returns how many fault hits are still queued.
func (s *Server) PendingFaults() int { return s.faults.Pending() }

// Held returns how many requests a fault's Delay holds right now.
func (s *Server) Held() int { return s.faults.Held() }

// playFault plays f and reports whether the request is finished.
func (s *Server) playFault(w http.ResponseWriter, r *http.Request, path string, f fault.Fault) bool {
	return s.faults.Play(w, r, f, fault.Service{
		RetryAfter: func(h http.Header, d time.Duration) {
			h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(d)))
		},
		Answer: func(w http.ResponseWriter, _ *http.Request, status int) {
			if status == http.StatusTooManyRequests && f.RetryAfter > 0 {
				writeJSON(w, status, map[string]int{"retry-after": retryAfterSeconds(f.RetryAfter)})
				return
			}
			writeError(w, path, status, "injected fault")
		},
		Closing: s.closing,
	})
}
