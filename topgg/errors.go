package topgg

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Sentinel errors for [errors.Is]. The typed errors below match them where it applies.
var (
	// ErrNotFound matches a 404 answer.
	ErrNotFound = errors.New("topgg: not found")
	// ErrUnauthorized matches a 401 answer on any route, and the 400 with which v1
	// refuses an invalid project token on the routes whose only documented 400 it
	// is (project, announcements, metrics, metrics batch). It is decided from the
	// status and the route only, never from the service's words: a 400 elsewhere
	// (a refused vote cursor, any v0 400) does not match.
	ErrUnauthorized = errors.New("topgg: unauthorized (invalid or missing token)")
	// ErrRateLimited matches every *RateLimitError: a 429 answer, an answer of
	// another retryable status (5xx, 408) that carried a Retry-After, or a call
	// refused locally because such a block has not ended yet.
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
	// Body is the start of the body, cut to a bound, with any trace of the token
	// replaced by "[redacted]".
	Body []byte
	// Err is the decoder's error; when its message quoted the token, it is
	// replaced by an error with the scrubbed message only.
	Err error
}

// Error says which call and status could not be decoded; it never contains the token.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("topgg: %s: decoding %d answer: %v", e.Op, e.Status, e.Err)
}

// Unwrap returns the decoder's error.
func (e *DecodeError) Unwrap() error { return e.Err }

// APIError is an answer of the service that says no (status >= 400). It carries the
// v1 problem+json fields and the v0 error message where present. Every string and
// the body have any trace of the token (an echoed Authorization header, say)
// replaced by "[redacted]".
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
	// RetryAfter is the answer's Retry-After (0 when it had none). The client
	// blocks the route's family for that long whatever the status; a retryable
	// status with a Retry-After comes wrapped in a *RateLimitError.
	RetryAfter time.Duration
	// Hint, when not empty, says why the token was likely refused: it is set on
	// a v1 answer matching ErrUnauthorized when the token looks like a legacy
	// v0 token. It never quotes the token.
	Hint string

	// tokenOnly400 is true on routes whose only documented 400 is an invalid
	// token (see ErrUnauthorized); set by the client from the route.
	tokenOnly400 bool
}

// Error gives the call, the status, the service's own words and the hint; it never
// contains the token.
func (e *APIError) Error() string {
	var b strings.Builder
	status := http.StatusText(e.StatusCode)
	fmt.Fprintf(&b, "topgg: %s: %d %s", e.Op, e.StatusCode, status)
	// Each thing once: a problem+json title is often the status text
	// ("401 Unauthorized: Unauthorized"), and a detail may repeat the title.
	said := []string{status}
	for _, s := range []string{e.Title, e.Detail, e.Message} {
		if s != "" && !slices.ContainsFunc(said, func(d string) bool { return strings.EqualFold(d, s) }) {
			b.WriteString(": ")
			b.WriteString(s)
			said = append(said, s)
		}
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound), errors.Is(err, ErrUnauthorized) and
// errors.Is(err, ErrRateLimited) work, from the status and the route only.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrUnauthorized:
		return e.unauthorized()
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	}
	return false
}

// unauthorized: the client validates every argument before sending, so on a
// route whose one documented 400 is an invalid project token, a 400 means that.
func (e *APIError) unauthorized() bool {
	return e.StatusCode == http.StatusUnauthorized || (e.StatusCode == http.StatusBadRequest && e.tokenOnly400)
}

// RateLimitError reports a 429, an answer of another retryable status (5xx, 408)
// that carried a Retry-After, or a call refused locally because such a block (or
// the announcement cooldown) has not ended yet: Local is then true and the
// refused request was not sent. The client records a block the moment the answer
// arrives, before any wait, and checks it before every attempt of every call of
// the route's family: no request of the family goes out before it ends. A call
// that may be retried waits out a block of up to [RetryPolicy.MaxRetryAfter]; a
// longer one refuses it at once.
type RateLimitError struct {
	Op string
	// RetryAfter is how long to wait before the route can be called again.
	RetryAfter time.Duration
	// Until is the moment the block ends; zero when the answer gave no wait.
	Until time.Time
	// Local is true when the client refused the call (or its retry) without a request.
	Local bool
	// API is the answer (a 429, or the 5xx that carried a Retry-After); nil when Local.
	API *APIError
}

// Error says how long to wait and whether a request was sent; it never contains the token.
func (e *RateLimitError) Error() string {
	wait := e.RetryAfter.Round(time.Second)
	if e.RetryAfter < 10*time.Second {
		wait = e.RetryAfter.Round(time.Millisecond)
	}
	switch {
	case e.Local:
		return fmt.Sprintf("topgg: %s: rate limited, not sent; retry after %s", e.Op, wait)
	case e.API != nil && e.API.StatusCode != http.StatusTooManyRequests:
		return fmt.Sprintf("%s; blocked by Retry-After, retry after %s", e.API.Error(), wait)
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

// ErrPagination matches every *PaginationError.
var ErrPagination = errors.New("topgg: the service's pages do not progress")

// PaginationError ends a walk over pages (see [Client.AllVotes]) when the
// service's answers would keep it going forever: a cursor that does not advance
// or comes back after other pages (a cycle), a page that repeats an earlier
// page's votes under a new cursor, or more pages than any history holds.
type PaginationError struct {
	Op string
	// Page is the 1-based number of the page that showed the problem.
	Page int
	// Problem says what did not progress.
	Problem string
}

// Error names the call, the page and the problem; it never quotes a cursor.
func (e *PaginationError) Error() string {
	return fmt.Sprintf("topgg: %s: page %d: %s; stopped", e.Op, e.Page, e.Problem)
}

// Is makes errors.Is(err, ErrPagination) work.
func (e *PaginationError) Is(target error) bool { return target == ErrPagination }
