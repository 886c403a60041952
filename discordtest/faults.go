package discordtest

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Route names a REST endpoint of the Server, as "METHOD /path" with
// Discord's path parameters in braces, under the API root (/api/v9 or
// /api/v10). Faults are injected per route.
type Route string

// The routes of the Server, for Inject.
const (
	// RouteGateway is the gateway lookup discordgo's Open makes.
	RouteGateway Route = "GET /gateway"
	// RouteGatewayBot is the gateway lookup with the recommended shard count.
	RouteGatewayBot Route = "GET /gateway/bot"
	// RouteCurrentUser reads the bot user.
	RouteCurrentUser Route = "GET /users/@me"
	// RouteApplication reads the bot's application (discordgo's Application).
	RouteApplication Route = "GET /oauth2/applications/@me"
	// RouteCurrentApplication reads the bot's application (the newer path).
	RouteCurrentApplication Route = "GET /applications/@me"
	// RouteCommands lists the global application commands.
	RouteCommands Route = "GET /applications/{app}/commands"
	// RouteCommandsOverwrite replaces the global application commands.
	RouteCommandsOverwrite Route = "PUT /applications/{app}/commands"
	// RouteCommandCreate creates or updates one global application command.
	RouteCommandCreate Route = "POST /applications/{app}/commands"
	// RouteGuildCommandsOverwrite replaces a guild's application commands.
	RouteGuildCommandsOverwrite Route = "PUT /applications/{app}/guilds/{guild}/commands"
	// RouteMemberRoleAdd gives a member a role.
	RouteMemberRoleAdd Route = "PUT /guilds/{guild}/members/{user}/roles/{role}"
	// RouteMemberRoleRemove takes a role from a member.
	RouteMemberRoleRemove Route = "DELETE /guilds/{guild}/members/{user}/roles/{role}"
	// RouteDMCreate opens the DM channel with a user (discordgo's UserChannelCreate).
	RouteDMCreate Route = "POST /users/@me/channels"
	// RouteMessageCreate sends a message to a channel (ChannelMessageSend).
	RouteMessageCreate Route = "POST /channels/{channel}/messages"
	// RouteInteractionCallback answers an interaction.
	RouteInteractionCallback Route = "POST /interactions/{id}/{token}/callback"
	// RouteInteractionEdit edits an interaction's original answer.
	RouteInteractionEdit Route = "PATCH /webhooks/{app}/{token}/messages/@original"
	// RouteInteractionFollowup sends a follow-up message to an interaction.
	RouteInteractionFollowup Route = "POST /webhooks/{app}/{token}"
)

// Fault is a misbehaviour of Discord that the Server plays instead of its
// normal answer: see RateLimited, LongBody and NoAnswer.
type Fault struct {
	kind       faultKind
	retryAfter time.Duration
	global     bool
	size       int64
}

type faultKind int

const (
	faultNone faultKind = iota
	faultRateLimited
	faultLongBody
	faultNoAnswer
)

// RateLimited answers 429 Too Many Requests as Discord does: Retry-After
// (seconds, with fractions), X-RateLimit-Reset-After, X-RateLimit-Scope and,
// when global, X-RateLimit-Global, and the JSON body with retry_after and
// global. retryAfter is rounded to milliseconds (at least 1ms).
func RateLimited(retryAfter time.Duration, global bool) Fault {
	return Fault{kind: faultRateLimited, retryAfter: max(retryAfter.Round(time.Millisecond), time.Millisecond), global: global}
}

// LongBody answers 200 with a JSON content type and a body of size bytes
// (white space after an opening brace, so never valid JSON) with no
// Content-Length, streamed. A size below 1 means a body that never ends: it
// stops only when the client goes or the Server is closed.
func LongBody(size int64) Fault {
	if size < 1 {
		size = math.MaxInt64
	}
	return Fault{kind: faultLongBody, size: size}
}

// NoAnswer holds the request without answering until the client gives up or
// the Server is closed, as a Discord that is down behind its load balancer
// does.
func NoAnswer() Fault { return Fault{kind: faultNoAnswer} }

// injected is a fault and how many requests it still answers (< 0: all).
type injected struct {
	fault Fault
	left  int
}

// Inject makes the next n requests on route answer with f instead of the
// Server's normal answer (n < 0: every request until ClearFaults). The
// requests are recorded in Calls like any other. Faults on one route are
// played in the order they were injected. It fails for an unknown route, a
// zero Fault or n == 0.
func (s *Server) Inject(route Route, n int, f Fault) error {
	if !knownRoute(route) {
		return fmt.Errorf("discordtest: inject: unknown route %q", route)
	}
	if f.kind == faultNone {
		return errors.New("discordtest: inject: zero Fault (use RateLimited, LongBody or NoAnswer)")
	}
	if n == 0 {
		return errors.New("discordtest: inject: n is 0")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], &injected{fault: f, left: n})
	return nil
}

// ClearFaults removes every injected fault that has not been played yet.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.faults)
}

func knownRoute(r Route) bool {
	switch r {
	case RouteGateway, RouteGatewayBot, RouteCurrentUser, RouteApplication, RouteCurrentApplication,
		RouteCommands, RouteCommandsOverwrite, RouteCommandCreate, RouteGuildCommandsOverwrite,
		RouteMemberRoleAdd, RouteMemberRoleRemove, RouteDMCreate, RouteMessageCreate,
		RouteInteractionCallback, RouteInteractionEdit, RouteInteractionFollowup:
		return true
	}
	return false
}

// takeFault returns the fault to play for a request whose mux pattern is
// pattern ("/api/{version}/..."), and counts it played.
func (s *Server) takeFault(method, pattern string) (Fault, bool) {
	rest, ok := strings.CutPrefix(pattern, "/api/{version}")
	if !ok {
		return Fault{}, false
	}
	route := Route(method + " " + rest)
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.faults[route]
	if len(q) == 0 {
		return Fault{}, false
	}
	f := q[0]
	if f.left > 0 {
		f.left--
		if f.left == 0 {
			s.faults[route] = q[1:]
		}
	}
	return f.fault, true
}

// play answers r with f.
func (s *Server) play(w http.ResponseWriter, r *http.Request, f Fault) {
	switch f.kind {
	case faultRateLimited:
		secs := strconv.FormatFloat(f.retryAfter.Seconds(), 'f', -1, 64)
		h := w.Header()
		h.Set("Retry-After", secs)
		h.Set("X-RateLimit-Limit", "5")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset-After", secs)
		h.Set("X-RateLimit-Scope", "user")
		if f.global {
			h.Set("X-RateLimit-Global", "true")
			h.Set("X-RateLimit-Scope", "global")
		}
		writeJSON(w, http.StatusTooManyRequests, map[string]any{
			"message": "You are being rate limited.", "retry_after": f.retryAfter.Seconds(), "global": f.global,
		})
	case faultLongBody:
		s.writeLongBody(w, r, f.size)
	case faultNoAnswer:
		s.mu.Lock()
		s.held++
		s.notifyLocked()
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.held--
			s.notifyLocked()
			s.mu.Unlock()
		}()
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	}
}

// Held returns how many requests a NoAnswer fault holds right now: a test
// waits on it to know that the client is waiting.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// longBodyChunk is what writeLongBody writes at a time.
const longBodyChunk = 32 << 10

// writeLongBody streams size bytes, stopping early when the client goes or
// the Server is closed.
func (s *Server) writeLongBody(w http.ResponseWriter, r *http.Request, size int64) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	chunk := []byte(strings.Repeat(" ", longBodyChunk))
	chunk[0] = '{'
	for written := int64(0); written < size; {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		default:
		}
		n := min(int64(len(chunk)), size-written)
		if _, err := w.Write(chunk[:n]); err != nil {
			return
		}
		written += n
		chunk[0] = ' '
	}
}
