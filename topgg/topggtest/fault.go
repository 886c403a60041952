package topggtest

import (
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Fault is a failure the server plays instead of (or before) a normal answer.
// Faults are matched in the order they were injected; each matching request
// consumes one hit of the first fault that matches it, and is still
// recorded by Requests.
//
// What the fault does, in order:
//   - Delay > 0: wait that long (real time) before anything else; if the
//     client cancels meanwhile nothing is answered, and if the server is
//     closed meanwhile the connection is dropped.
//   - Drop: close the connection without answering.
//   - Status or RetryAfter set: answer with that status (429 if only
//     RetryAfter is set) instead of the normal handler.
//   - otherwise (a pure Delay): the request is then served normally.
//
// Note that Go's http.Transport transparently retries an idempotent request
// (GET, PUT with a rewindable body, ...) once when a reused keep-alive
// connection is dropped before any answer; use Times >= 2 or a fresh
// connection when a test wants the client itself to see a Drop.
type Fault struct {
	// Method matches the request method (case-insensitive); empty matches any.
	Method string
	// Path matches the path without the "/api" prefix, e.g.
	// "/v1/projects/@me/metrics": exactly, or as a prefix if it ends with
	// '*' ("/bots*" hits every v0 path, "/v1/*" every v1 path). Empty
	// matches any path.
	Path string
	// Times is how many matching requests the fault hits; <= 0 means 1.
	Times int
	// Status is the answer's status code.
	Status int
	// RetryAfter sets a Retry-After header in whole seconds, rounded up.
	// Alone it makes the answer a 429 whose default body is
	// {"retry-after": N}.
	RetryAfter time.Duration
	// Drop closes the connection without answering.
	Drop bool
	// Delay waits before answering, honouring the request's context.
	Delay time.Duration
	// Body replaces the default body: {"retry-after": N} for a 429 with
	// RetryAfter, else a problem+json document under /v1 and
	// {"error": "..."} elsewhere. Each [EchoAuthorization] in it is replaced
	// by the request's Authorization header, as a careless service quoting
	// it would answer.
	Body string
	// ContentType goes with Body; default "application/json".
	ContentType string
	// Header adds headers to the answer (after Retry-After, so it can set
	// that header in another form, such as an HTTP date), e.g. a Location
	// for a redirect status. [EchoAuthorization] in a value is replaced as
	// in Body.
	Header map[string]string
}

// Placeholders in a [Fault]'s Body and Header values.
const (
	// EchoAuthorization stands for the request's Authorization header: a test
	// of a client's redaction makes the server quote the credentials back in
	// any error shape.
	EchoAuthorization = "{{authorization}}"
	// FaultHit stands for the number of this hit of the fault (1, 2, ...): a
	// fault with Times > 1 can answer a fresh vote cursor each time around the
	// same votes, as a service whose cursors do not progress would.
	FaultHit = "{{hit}}"
)

type pendingFault struct {
	Fault
	left, hits int
}

// Inject queues a fault. It is safe to call at any time.
func (s *Server) Inject(f Fault) {
	left := f.Times
	if left <= 0 {
		left = 1
	}
	f.Header = maps.Clone(f.Header) // the caller may reuse its map
	s.mu.Lock()
	s.faults = append(s.faults, &pendingFault{Fault: f, left: left})
	s.mu.Unlock()
}

// PendingFaults returns how many fault hits are still queued; 0 once every
// injected fault has been consumed.
func (s *Server) PendingFaults() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.faults {
		n += f.left
	}
	return n
}

func (f *Fault) matches(method, path string) bool {
	if f.Method != "" && !strings.EqualFold(f.Method, method) {
		return false
	}
	switch {
	case f.Path == "":
		return true
	case strings.HasSuffix(f.Path, "*"):
		return strings.HasPrefix(path, strings.TrimSuffix(f.Path, "*"))
	default:
		return f.Path == path
	}
}

// takeFault consumes one hit of the first fault matching the request.
func (s *Server) takeFault(method, path string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if !f.matches(method, path) {
			continue
		}
		f.left--
		f.hits++
		if f.left == 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		return f.numbered(), true
	}
	return Fault{}, false
}

// numbered returns the fault of this hit, with FaultHit replaced.
func (f *pendingFault) numbered() Fault {
	out := f.Fault
	hit := strings.NewReplacer(FaultHit, strconv.Itoa(f.hits))
	out.Body = hit.Replace(out.Body)
	if len(out.Header) > 0 {
		out.Header = make(map[string]string, len(f.Header))
		for k, v := range f.Header {
			out.Header[k] = hit.Replace(v)
		}
	}
	return out
}

// applyFault plays f and reports whether the request is finished.
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, path string, f Fault) bool {
	if f.Delay > 0 && s.delayFault(w, r, f.Delay) {
		return true
	}
	if f.Drop {
		drop(w)
		return true
	}
	status := f.Status
	if status == 0 && f.RetryAfter > 0 {
		status = http.StatusTooManyRequests
	}
	if status == 0 {
		return false
	}
	writeFault(w, r, path, status, f)
	return true
}

// delayFault waits d before the fault plays, and reports whether the request
// ended meanwhile: the client left, or the server is closing (then the
// connection is dropped).
func (s *Server) delayFault(w http.ResponseWriter, r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-r.Context().Done():
		return true
	case <-s.closing:
		drop(w)
		return true
	}
}

// writeFault answers with f's status, headers and body; Authorization is
// echoed where f asks for it.
func writeFault(w http.ResponseWriter, r *http.Request, path string, status int, f Fault) {
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(f.RetryAfter)))
	}
	echo := strings.NewReplacer(EchoAuthorization, r.Header.Get("Authorization"))
	for k, v := range f.Header {
		w.Header().Set(k, echo.Replace(v))
	}
	switch {
	case f.Body != "":
		ct := f.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(echo.Replace(f.Body)))
	case status == http.StatusTooManyRequests && f.RetryAfter > 0:
		writeJSON(w, status, map[string]int{"retry-after": retryAfterSeconds(f.RetryAfter)})
	default:
		writeError(w, path, status, "injected fault")
	}
}

// drop closes the connection under the request without an answer.
func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Aborting the handler makes net/http close the connection too.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}
