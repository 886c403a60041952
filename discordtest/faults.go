package discordtest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/internal/fault"
)

// Fault is a misbehaviour of Discord that the Server plays instead of (or
// before) its normal answer. topggtest.Fault has the same fields and means
// the same thing. Faults apply to REST requests (the gateway's websocket is
// dropped with [Server.CloseClientConnections] instead). They are matched in
// the order they were injected; each matching request consumes one hit of
// the first fault that matches it, and is still recorded by Calls.
//
// What the fault does, in order:
//   - Delay > 0: hold the request that long (real time; [Server.Held]
//     counts it meanwhile); if the client cancels nothing is answered, and
//     if the Server is closed the connection is dropped. A Delay longer than
//     the test is a request never answered, as from a Discord that is down
//     behind its load balancer.
//   - Drop: close the connection without answering.
//   - Status, RetryAfter or Endless set: answer with Status (429 if only
//     RetryAfter is set, 200 if only Endless is) instead of the normal
//     handler.
//   - otherwise (a pure Delay): the request is then served normally.
//
// In Body and Header values, "{{authorization}}" is replaced by the
// request's Authorization header and "{{hit}}" by the number of this hit of
// the fault (1, 2, ...).
//
// A 429 as Discord sends it, and a body that never ends:
//
//	srv.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", RetryAfter: time.Minute})
//	srv.Inject(discordtest.Fault{Path: "/users/@me", Body: "{", Endless: true})
type Fault struct {
	// Method matches the request method (case-insensitive); empty matches any.
	Method string
	// Path matches the path under the API root (without "/api/v9" or
	// "/api/v10"), e.g. "/users/@me": exactly, or as a prefix if it ends
	// with '*' ("/guilds/*" hits every role request). Empty matches any
	// path.
	Path string
	// Times is how many matching requests the fault hits; 0 means 1.
	Times int
	// Status is the answer's status code.
	Status int
	// RetryAfter sets the rate-limit headers as Discord does: Retry-After
	// and X-RateLimit-Reset-After (seconds, with fractions, rounded to
	// milliseconds), X-RateLimit-Remaining 0 and X-RateLimit-Scope "user".
	// Alone it makes the answer a 429 with Discord's body {"message",
	// "retry_after", "global"}; a Header X-RateLimit-Global "true" makes it
	// a global limit (body and scope say so).
	RetryAfter time.Duration
	// Drop closes the connection without answering.
	Drop bool
	// Delay holds the request before anything else, honouring its context.
	Delay time.Duration
	// Body replaces the default body: Discord's rate-limit body for a 429
	// with RetryAfter, else its {"message", "code"} error.
	Body string
	// ContentType goes with Body; default "application/json".
	ContentType string
	// Header adds headers to the answer (after the rate-limit headers, so it
	// can replace them).
	Header map[string]string
	// Endless makes the body go on after Body with white space, without
	// Content-Length, until the client goes or the Server is closed.
	Endless bool
}

// Inject queues a fault. It is safe to call at any time. It fails, and
// queues nothing, for a fault that does nothing (no Status, RetryAfter,
// Drop, Delay or Endless), a Body or Header without an answer to carry it,
// a negative Times, Delay or RetryAfter, an invalid Status, or a Path that
// does not start with '/'.
func (s *Server) Inject(f Fault) error {
	if err := s.faults.Add(fault.Fault(f)); err != nil {
		return fmt.Errorf("discordtest: inject: %w", err)
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

// faultPath returns the path a Fault's Path is matched against: the URL
// path under /api/v9 or /api/v10, else the whole path.
func faultPath(urlPath string) string {
	for _, root := range []string{"/api/v9", "/api/v10"} {
		if rest, ok := strings.CutPrefix(urlPath, root); ok && strings.HasPrefix(rest, "/") {
			return rest
		}
	}
	return urlPath
}

// playFault plays f and reports whether the request is finished.
func (s *Server) playFault(w http.ResponseWriter, r *http.Request, f fault.Fault) bool {
	return s.faults.Play(w, r, f, fault.Service{
		RetryAfter: func(h http.Header, d time.Duration) {
			secs := strconv.FormatFloat(rateLimitWait(d).Seconds(), 'f', -1, 64)
			h.Set("Retry-After", secs)
			h.Set("X-RateLimit-Limit", "5")
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("X-RateLimit-Reset-After", secs)
			h.Set("X-RateLimit-Scope", "user")
		},
		Answer: func(w http.ResponseWriter, _ *http.Request, status int) {
			if status != http.StatusTooManyRequests || f.RetryAfter == 0 {
				writeError(w, status, codeGeneral, fmt.Sprintf("%d: %s", status, http.StatusText(status)))
				return
			}
			global := w.Header().Get("X-RateLimit-Global") == "true"
			if global {
				w.Header().Set("X-RateLimit-Scope", "global")
			}
			writeJSON(w, status, map[string]any{
				"message": "You are being rate limited.", "retry_after": rateLimitWait(f.RetryAfter).Seconds(), "global": global,
			})
		},
		Closing: s.done,
	})
}

// rateLimitWait is d as Discord states it: milliseconds, at least one.
func rateLimitWait(d time.Duration) time.Duration {
	return max(d.Round(time.Millisecond), time.Millisecond)
}
