package topggtest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/dblkit/go-topgg/internal/fault"
)

// Fault is a failure the server plays instead of (or before) its normal
// answer. discordtest.Fault has the same fields and means the same thing.
// Faults are matched in the order they were injected; each matching request
// consumes one hit of the first fault that matches it, and is still
// recorded by Requests.
//
// What the fault does, in order:
//   - Delay > 0: hold the request that long (real time; [Server.Held] counts
//     it meanwhile); if the client cancels nothing is answered, and if the
//     server is closed the connection is dropped. A Delay longer than the
//     test is a request never answered.
//   - Drop: close the connection without answering.
//   - Status, RetryAfter or Endless set: answer with Status (429 if only
//     RetryAfter is set, 200 if only Endless is) instead of the normal
//     handler.
//   - otherwise (a pure Delay): the request is then served normally.
//
// In Body and Header values, "{{authorization}}" is replaced by the
// request's Authorization header (a test of a client's redaction makes the
// server quote the credentials back, as a careless service would) and
// "{{hit}}" by the number of this hit of the fault (1, 2, ...: a fault with
// Times > 1 can answer a fresh vote cursor each time around the same votes).
//
// Note that Go's http.Transport transparently retries an idempotent request
// (GET, PUT with a rewindable body, ...) once when a reused keep-alive
// connection is dropped before any answer; use Times >= 2 or a fresh
// connection when a test wants the client itself to see a Drop.
type Fault struct {
	// Method matches the request method (case-insensitive); empty matches any.
	Method string
	// Path matches the path under the API root (without "/api"), e.g.
	// "/v1/projects/@me/metrics": exactly, or as a prefix if it ends with
	// '*' ("/bots*" hits every v0 path, "/v1/*" every v1 path). Empty
	// matches any path.
	Path string
	// Times is how many matching requests the fault hits; 0 means 1.
	Times int
	// Status is the answer's status code.
	Status int
	// RetryAfter sets the Retry-After header as the service does (whole
	// seconds, rounded up). Alone it makes the answer a 429 with the
	// service's body, {"retry-after": N}.
	RetryAfter time.Duration
	// Drop closes the connection without answering.
	Drop bool
	// Delay holds the request before anything else, honouring its context.
	Delay time.Duration
	// Body replaces the default body: {"retry-after": N} for a 429 with
	// RetryAfter, else a problem+json document under /v1 and
	// {"error": "..."} elsewhere.
	Body string
	// ContentType goes with Body; default "application/json".
	ContentType string
	// Header adds headers to the answer (after Retry-After, so it can set
	// that header in another form, such as an HTTP date), e.g. a Location
	// for a redirect status.
	Header map[string]string
	// Endless makes the body go on after Body with white space, without
	// Content-Length, until the client goes or the server is closed.
	Endless bool
}

// Inject queues a fault. It is safe to call at any time. It fails, and
// queues nothing, for a fault that does nothing (no Status, RetryAfter,
// Drop, Delay or Endless), a Body or Header without an answer to carry it,
// a negative Times, Delay or RetryAfter, an invalid Status, or a Path that
// does not start with '/'.
func (s *Server) Inject(f Fault) error {
	if err := s.faults.Add(fault.Fault(f)); err != nil {
		return fmt.Errorf("topggtest: inject: %w", err)
	}
	return nil
}

// PendingFaults returns how many fault hits are still queued; 0 once every
// injected fault has been consumed.
func (s *Server) PendingFaults() int { return s.faults.Pending() }

// Held returns how many requests a fault's Delay holds right now: a test
// waits on it to know that the client is waiting, and on 0 to know that the
// client gave up.
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
