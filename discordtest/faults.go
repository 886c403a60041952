package discordtest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/internal/fault"
)

// Fault is a misbehaviour of Discord that the Server plays on a REST request
// instead of (or before) its answer, with the rules of topggtest.Fault; the
// gateway is dropped with [Server.CloseClientConnections] instead.
//
//	srv.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", RetryAfter: time.Minute})
//	srv.Inject(discordtest.Fault{Path: "/users/@me", Body: "{", Endless: true})
type Fault struct {
	// Method matches the request method (case-insensitive); empty matches any.
	Method string
	// Path matches the path under "/api/v9" or "/api/v10" ("/users/@me"),
	// as a prefix if it ends with '*'; empty matches any path.
	Path string
	// Times is how many matching requests the fault hits; 0 means 1.
	Times int
	// Status is the answer's status code.
	Status int
	// RetryAfter sets Discord's rate-limit headers; alone it makes a 429 with
	// Discord's body. A Header X-RateLimit-Global "true" makes it global.
	RetryAfter time.Duration
	// Drop closes the connection without answering.
	Drop bool
	// Delay holds the request before anything else, honouring its context.
	Delay time.Duration
	// Body replaces Discord's body (its {"message", "code"} error).
	Body string
	// ContentType goes with Body; default "application/json".
	ContentType string
	// Header adds headers to the answer, after the rate-limit headers.
	Header map[string]string
	// Endless makes the body go on with white space until the client or Server goes.
	Endless bool
}

// Inject queues a fault; it fails, queuing nothing, where
// topggtest.Server.Inject does.
func (s *Server) Inject(f Fault) error {
	if err := s.faults.Add(fault.Fault(f)); err != nil {
		return fmt.Errorf("discordtest: inject: %w", err)
	}
	return nil
}

// PendingFaults returns how many fault hits are still queued.
func (s *Server) PendingFaults() int { return s.faults.Pending() }

// Held returns how many requests a fault's Delay holds right now.
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
				writeStatus(w, status)
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
