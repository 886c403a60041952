package topggtest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// Fault is a failure the server plays instead of (or before) its normal
// answer; a matching request is still recorded. Go's http.Transport retries an
// idempotent request once when a reused connection is dropped: use Times >= 2
// when the client must see a Drop. The same type as discordtest.Fault.
type Fault = httpx.Fault

// Inject queues a fault. It fails, queuing nothing, for a fault that does
// nothing, a Body or Header with no answer to carry it, a negative Times,
// Delay or RetryAfter, an invalid Status, or a Path not starting with '/'.
func (s *Server) Inject(f Fault) error {
	if err := s.faults.Add(f); err != nil {
		return fmt.Errorf("topggtest: inject: %w", err)
	}
	return nil
}

// PendingFaults returns how many fault hits are still queued.
func (s *Server) PendingFaults() int { return s.faults.Pending() }

// Held returns how many requests a fault's Delay holds right now.
func (s *Server) Held() int { return s.faults.Held() }

// playFault plays f and reports whether the request is finished.
func (s *Server) playFault(w http.ResponseWriter, r *http.Request, path string, f httpx.Fault) bool {
	return s.faults.Play(w, r, f, httpx.FaultService{
		RetryAfter: func(h http.Header, d time.Duration) {
			h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(d)))
		},
		Answer: func(w http.ResponseWriter, _ *http.Request, status int) {
			if status == http.StatusTooManyRequests && f.RetryAfter > 0 {
				writeTooMany(w, path, retryAfterSeconds(f.RetryAfter), "injected fault")
				return
			}
			writeError(w, path, status, "injected fault")
		},
		Closing: s.hooks.ctx.Done(), // closed by Close
	})
}
