package discordtest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// Fault is a misbehaviour of Discord that the Server plays on a REST request
// instead of (or before) its answer: the same type as topggtest.Fault; the
// gateway is dropped with [Server.CloseClientConnections] instead.
//
//	srv.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", RetryAfter: time.Minute})
type Fault = httpx.Fault

// Inject queues a fault; it fails, queuing nothing, where
// topggtest.Server.Inject does.
func (s *Server) Inject(f Fault) error {
	if err := s.faults.Add(f); err != nil {
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
func (s *Server) playFault(w http.ResponseWriter, r *http.Request, f httpx.Fault) bool {
	return s.faults.Play(w, r, f, httpx.FaultService{
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
