package topgg

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Sentinel errors for [errors.Is]. The typed errors below match them where it applies.
var (
	// ErrNotFound matches a 404 answer.
	ErrNotFound = errors.New("topgg: not found")
	// ErrUnauthorized matches a 401 answer, the 400 with which v1 refuses an invalid
	// project token (on the endpoints whose only documented 400 it is: project,
	// announcements, metrics), and any 400 whose message mentions the token.
	ErrUnauthorized = errors.New("topgg: unauthorized (invalid or missing token)")
	// ErrRateLimited matches every *RateLimitError: a 429 answer or a block the client still remembers.
	ErrRateLimited = errors.New("topgg: rate limited")
)

// ValidationError reports an argument that breaks one of the service's rules. It is
// returned before any request is sent.
type ValidationError struct {
	// Field names the offending argument, e.g. "headline[en]" or "data[3].metrics.server_count".
	Field string
	// Problem says what is wrong with the value, e.g. "has 2 characters".
	Problem string
	// Rule states the rule that was broken, e.g. "3 to 140 characters".
	Rule string
}

// Error names the field, the problem and the rule; it never contains the token.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("topgg: invalid %s: %s (rule: %s)", e.Field, e.Problem, e.Rule)
}

// RequestError reports a request that got no usable HTTP answer: the connection failed,
// was dropped, or timed out. Op is the method and route (never the token); Attempts is
// how many times it was tried.
type RequestError struct {
	Op       string
	Attempts int
	Err      error
}

// Error says which call failed, after how many attempts, and why; it never contains the token.
func (e *RequestError) Error() string {
	return fmt.Sprintf("topgg: %s: request failed after %d attempt(s): %v", e.Op, e.Attempts, e.Err)
}

// Unwrap returns the underlying transport error (a context error included).
func (e *RequestError) Unwrap() error { return e.Err }

// DecodeError reports a successful answer whose body could not be decoded.
type DecodeError struct {
	Op     string
	Status int
	// Body is the start of the body, cut to a bound.
	Body []byte
	Err  error
}

// Error says which call and status could not be decoded; it never contains the token.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("topgg: %s: decoding %d answer: %v", e.Op, e.Status, e.Err)
}

// Unwrap returns the decoder's error.
func (e *DecodeError) Unwrap() error { return e.Err }

// APIError is an answer of the service that says no (status >= 400). It carries the
// v1 problem+json fields and the v0 error message where present.
type APIError struct {
	Op         string
	StatusCode int
	// Type, Title and Detail come from a v1 problem+json body; any may be empty.
	Type, Title, Detail string
	// ProblemStatus is the problem+json "status" member; 0 when absent. It
	// normally equals StatusCode.
	ProblemStatus int
	// Message comes from a v0 body (`error`, or older `message`/`detail`).
	Message string
	// Body is the start of the raw body, cut to maxErrorBody bytes.
	Body []byte
	// Attempts is how many times the request was sent.
	Attempts int
}

// Error gives the call, the status and the service's own words; it never contains the token.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "topgg: %s: %d %s", e.Op, e.StatusCode, http.StatusText(e.StatusCode))
	for _, s := range []string{e.Title, e.Detail, e.Message} {
		if s != "" {
			b.WriteString(": ")
			b.WriteString(s)
		}
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound) and errors.Is(err, ErrUnauthorized) work.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrUnauthorized:
		// The client validates every argument before sending, so the one 400 that v1
		// documents, an invalid project token, is what a v1 400 means.
		return e.StatusCode == http.StatusUnauthorized ||
			(e.StatusCode == http.StatusBadRequest && (tokenIsOnly400(e.Op) || mentionsToken(e)))
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	}
	return false
}

// tokenIsOnly400 reports whether op is a v1 endpoint whose only documented 400 is
// an invalid token. Vote endpoints are not: a refused cursor is a 400 there too.
func tokenIsOnly400(op string) bool {
	_, path, _ := strings.Cut(op, " ")
	switch path {
	case "/v1/projects/@me", "/v1/projects/@me/announcements", "/v1/projects/@me/metrics", "/v1/projects/@me/metrics/batch":
		return true
	}
	return false
}

func mentionsToken(e *APIError) bool {
	s := strings.ToLower(e.Title + " " + e.Detail + " " + e.Message)
	return strings.Contains(s, "token")
}

// RateLimitError reports a 429, or a call refused locally because an earlier 429's
// block (or the announcement cooldown) has not ended yet: Local is then true and
// the refused request was not sent. The block is checked before every attempt, so
// a call whose first attempt failed is refused too, instead of retried, when
// another call learnt of a block while it backed off.
type RateLimitError struct {
	Op string
	// RetryAfter is how long to wait before the route can be called again.
	RetryAfter time.Duration
	// Until is the moment the block ends.
	Until time.Time
	// Local is true when the client refused the call (or its retry) without a request.
	Local bool
	// API is the 429 answer; nil when Local.
	API *APIError
}

// Error says how long to wait and whether a request was sent; it never contains the token.
func (e *RateLimitError) Error() string {
	wait := e.RetryAfter.Round(time.Second)
	if e.RetryAfter < 10*time.Second {
		wait = e.RetryAfter.Round(time.Millisecond)
	}
	if e.Local {
		return fmt.Sprintf("topgg: %s: rate limited, not sent; retry after %s", e.Op, wait)
	}
	return fmt.Sprintf("topgg: %s: rate limited (429); retry after %s", e.Op, wait)
}

// Is makes errors.Is(err, ErrRateLimited) work.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// Unwrap returns the 429 *APIError, if there was an answer.
func (e *RateLimitError) Unwrap() error {
	if e.API == nil {
		return nil
	}
	return e.API
}
