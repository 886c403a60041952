// This file: plays the failures injected into the two fake services,
// topgg/topggtest and discordtest: both kits' Fault is this package's.

package httpx

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Placeholders replaced in a Fault's Body and Header values.
const (
	EchoAuthorization = "{{authorization}}" // the request's Authorization header
	Hit               = "{{hit}}"           // the number of this hit (1, 2, ...)
)

// Fault is a failure a fake service plays instead of (or before) its normal
// answer; topggtest.Fault and discordtest.Fault are this type. Faults match in
// the order injected; a matching request uses one hit of the first match.
type Fault struct {
	// Method matches the request method (case-insensitive); empty matches any.
	Method string
	// Path matches the path under the API root (topggtest: without "/api";
	// discordtest: under "/api/v9" or "/api/v10"), exactly or as a prefix if
	// it ends with '*' ("/v1/*"); empty matches any.
	Path string
	// Times is how many matching requests the fault hits; 0 means 1.
	Times int
	// Status is the answer's status code.
	Status int
	// RetryAfter sets the service's rate-limit headers (topggtest: Retry-After
	// in whole seconds, rounded up; discordtest: Discord's X-RateLimit-*, a
	// Header X-RateLimit-Global "true" making it global); alone it makes a 429
	// with the service's body.
	RetryAfter time.Duration
	// Drop closes the connection without answering.
	Drop bool
	// Delay holds the request before anything else, honouring its context;
	// alone, the request is then served normally.
	Delay time.Duration
	// Body replaces the service's body; in Body and Header values
	// "{{authorization}}" is the request's Authorization header and "{{hit}}"
	// the number of this hit.
	Body string
	// ContentType goes with Body; default "application/json".
	ContentType string
	// Header adds headers to the answer, after the rate-limit headers (so it can replace them).
	Header map[string]string
	// Endless makes the body go on after Body until the client goes or the
	// server closes; alone, it answers 200.
	Endless bool
}

// Check reports why f cannot be played, or nil.
func (f *Fault) Check() error {
	if err := f.checkMatch(); err != nil {
		return err
	}
	switch {
	case f.Status != 0 && (f.Status < 100 || f.Status > 599):
		return fmt.Errorf("status %d is not an HTTP status", f.Status)
	case f.RetryAfter < 0 || f.Delay < 0:
		return errors.New("retry-after and delay must not be negative")
	case f.answers() == 0 && !f.Drop && f.Delay == 0:
		return errors.New("the fault does nothing: set Status, RetryAfter, Drop, Delay or Endless")
	case f.answers() == 0 && (f.Body != "" || f.ContentType != "" || len(f.Header) > 0):
		return errors.New("a body, content type or header needs an answer: set Status, RetryAfter or Endless")
	}
	return nil
}

// checkMatch checks what selects the requests.
func (f *Fault) checkMatch() error {
	switch {
	case strings.ContainsAny(f.Method, " /"):
		return fmt.Errorf("method %q is not an HTTP method", f.Method)
	case f.Path != "" && !strings.HasPrefix(f.Path, "/"):
		return fmt.Errorf("path %q must be empty or start with /", f.Path)
	case f.Times < 0:
		return fmt.Errorf("times %d is negative", f.Times)
	}
	return nil
}

// answers returns the status the fault answers with, 0 for none.
func (f *Fault) answers() int {
	switch {
	case f.Status != 0:
		return f.Status
	case f.RetryAfter > 0:
		return http.StatusTooManyRequests
	case f.Endless:
		return http.StatusOK
	}
	return 0
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

type pending struct {
	Fault
	left, hits int
}

// FaultQueue holds the injected faults of one server. Its zero value is ready; it
// is safe for concurrent use.
type FaultQueue struct {
	mu     sync.Mutex
	faults []*pending
	held   int
}

// Add checks f and queues it.
func (q *FaultQueue) Add(f Fault) error {
	if err := f.Check(); err != nil {
		return err
	}
	f.Header = maps.Clone(f.Header) // the caller may reuse its map
	q.mu.Lock()
	defer q.mu.Unlock()
	q.faults = append(q.faults, &pending{Fault: f, left: max(f.Times, 1)})
	return nil
}

// Pending returns how many hits are still queued.
func (q *FaultQueue) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, f := range q.faults {
		n += f.left
	}
	return n
}

// Held returns how many requests a Delay holds right now.
func (q *FaultQueue) Held() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.held
}

// Take consumes one hit of the first fault matching the request.
func (q *FaultQueue) Take(method, path string) (Fault, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, f := range q.faults {
		if !f.matches(method, path) {
			continue
		}
		f.left--
		f.hits++
		if f.left == 0 {
			q.faults = append(q.faults[:i], q.faults[i+1:]...)
		}
		return f.numbered(), true
	}
	return Fault{}, false
}

// numbered returns the fault of this hit, with Hit replaced.
func (f *pending) numbered() Fault {
	out := f.Fault
	hit := strings.NewReplacer(Hit, strconv.Itoa(f.hits))
	out.Body = hit.Replace(out.Body)
	if len(out.Header) > 0 {
		out.Header = make(map[string]string, len(f.Header))
		for k, v := range f.Header {
			out.Header[k] = hit.Replace(v)
		}
	}
	return out
}

// FaultService is what differs between the fakes when a fault answers.
type FaultService struct {
	// RetryAfter sets the service's rate-limit headers for a wait of d.
	RetryAfter func(h http.Header, d time.Duration)
	// Answer writes the service's own body with status.
	Answer func(w http.ResponseWriter, r *http.Request, status int)
	// Closing is closed when the server closes: held requests are dropped,
	// endless bodies end.
	Closing <-chan struct{}
}

// Play plays f on the request and reports whether the request is finished
// (false: a pure Delay, serve it normally).
func (q *FaultQueue) Play(w http.ResponseWriter, r *http.Request, f Fault, svc FaultService) bool {
	if f.Delay > 0 && q.hold(w, r, f.Delay, svc.Closing) {
		return true
	}
	if f.Drop {
		Drop(w)
		return true
	}
	status := f.answers()
	if status == 0 {
		return false
	}
	h := w.Header()
	if f.RetryAfter > 0 {
		svc.RetryAfter(h, f.RetryAfter)
	}
	echo := strings.NewReplacer(EchoAuthorization, r.Header.Get("Authorization"))
	for k, v := range f.Header {
		h.Set(k, echo.Replace(v))
	}
	if f.Body == "" && !f.Endless {
		svc.Answer(w, r, status)
		return true
	}
	ct := f.ContentType
	if ct == "" {
		ct = "application/json"
	}
	h.Set("Content-Type", ct)
	w.WriteHeader(status)
	_, err := w.Write([]byte(echo.Replace(f.Body)))
	if err == nil && f.Endless {
		writeEndless(w, r, svc.Closing)
	}
	return true
}

// hold waits d and reports whether the request ended meanwhile (the client
// left, or the server closed and the connection was dropped).
func (q *FaultQueue) hold(w http.ResponseWriter, r *http.Request, d time.Duration, closing <-chan struct{}) bool {
	q.mu.Lock()
	q.held++
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.held--
		q.mu.Unlock()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-r.Context().Done():
		return true
	case <-closing:
		Drop(w)
		return true
	}
}

// writeEndless writes white space until the client goes or the server
// closes.
func writeEndless(w http.ResponseWriter, r *http.Request, closing <-chan struct{}) {
	chunk := []byte(strings.Repeat(" ", 32<<10))
	for {
		select {
		case <-r.Context().Done():
			return
		case <-closing:
			return
		default:
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// Drop closes the connection under the request without an answer.
func Drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Aborting the handler makes net/http close the connection too.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}
