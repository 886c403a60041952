package topgg

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Sentinel errors for [errors.Is]; the typed errors below match them.
var (
	// ErrNotFound matches a 404 answer.
	ErrNotFound = errors.New("topgg: not found")
	// ErrUnauthorized matches a 401, and a 400 on the v1 routes whose only
	// documented 400 is an invalid token (by status and route only).
	ErrUnauthorized = errors.New("topgg: unauthorized (invalid or missing token)")
	// ErrRateLimited matches every *RateLimitError.
	ErrRateLimited = errors.New("topgg: rate limited")
	// ErrPagination ends a walk over pages ([Client.AllVotes]) that the
	// service's answers would keep going forever; its error names the page.
	ErrPagination = errors.New("topgg: the service's pages do not progress")
)

// ValidationError reports an argument that breaks one of the service's rules,
// before any request is sent: the Field ("headline[en]"), the Problem ("has 2
// characters") and the Rule broken ("3 to 140 characters").
type ValidationError struct {
	Field, Problem, Rule string
}

// Error names the field, the problem and the rule.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("invalid %s: %s (rule: %s)", e.Field, e.Problem, e.Rule)
}

// ConfigError reports a missing or invalid setting, in every package: the Go
// Field ("autopost.Config.Interval"), the environment Variable it came from,
// if any, and the Problem, or Err.
type ConfigError struct {
	Field, Variable, Problem string
	Err                      error
}

// Unwrap returns Err.
func (e *ConfigError) Unwrap() error { return e.Err }

// Error names the variable when the value came from the environment, else
// the field: "TOPGG_AUTOPOST_INTERVAL: ..." or "plugin.Config.AutopostInterval: ...".
func (e *ConfigError) Error() string {
	problem := e.Problem
	if problem == "" && e.Err != nil {
		problem = e.Err.Error()
	}
	return cmp.Or(e.Variable, e.Field) + ": " + problem
}

// RequestError reports a request that got no usable answer (a failed, dropped
// or timed-out connection) after Attempts tries of Op (method and route).
type RequestError struct {
	Op       string
	Attempts int
	Err      error
}

// Error says which call failed, after how many attempts, and why.
func (e *RequestError) Error() string {
	return fmt.Sprintf("topgg: %s: request failed after %d attempt(s): %v", e.Op, e.Attempts, e.Err)
}

// Unwrap returns the underlying transport error (a context error included).
func (e *RequestError) Unwrap() error { return e.Err }

// DecodeError reports a successful answer whose body could not be decoded.
// Body (its start) and Err never hold the token.
type DecodeError struct {
	Op     string
	Status int
	Body   []byte
	Err    error
}

// Error says which call and status could not be decoded.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("topgg: %s: decoding %d answer: %v", e.Op, e.Status, e.Err)
}

// Unwrap returns the decoder's error.
func (e *DecodeError) Unwrap() error { return e.Err }

// APIError is an answer of the service that says no (status >= 400). Its
// strings and body never hold the token.
type APIError struct {
	Op         string
	StatusCode int
	// Type, Title and Detail come from a v1 problem+json body, Detail from a
	// v0 one too (its `error` or `message`); any may be empty.
	Type, Title, Detail string
	Body                []byte // the start of the raw body (4 KiB at most)
	Attempts            int
	RetryAfter          time.Duration // the answer's Retry-After (0: none), the route family's block
	Hint                string        // set when a v1 refusal is of what looks like a legacy v0 token

	tokenOnly400 bool // see ErrUnauthorized
}

// Error gives the call, the status, the service's own words and the hint.
func (e *APIError) Error() string {
	var b strings.Builder
	status := http.StatusText(e.StatusCode)
	fmt.Fprintf(&b, "topgg: %s: %d %s", e.Op, e.StatusCode, status)
	// Each thing once: a title often repeats the status text, a detail the title.
	said := status
	for _, s := range []string{e.Title, e.Detail} {
		if s != "" && !strings.EqualFold(s, status) && !strings.EqualFold(s, said) {
			b.WriteString(": " + s)
			said = s
		}
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, " (hint: %s)", e.Hint)
	}
	return b.String()
}

// Is matches ErrNotFound, ErrUnauthorized and ErrRateLimited by status and route.
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

// unauthorized: arguments are validated first, so on a route whose one
// documented 400 is an invalid token, a 400 means that.
func (e *APIError) unauthorized() bool {
	return e.StatusCode == http.StatusUnauthorized || (e.StatusCode == http.StatusBadRequest && e.tokenOnly400)
}

// RateLimitError reports a 429, another retryable answer with a Retry-After,
// or a call refused locally (Local, nothing sent) while a block lasts.
type RateLimitError struct {
	Op         string
	RetryAfter time.Duration // how long to wait
	Local      bool
	API        *APIError // the answer; nil when Local
}

// Error says how long to wait and whether a request was sent.
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

// Misuse sentinels, one per meaning in the module, each package wrapping them.
var (
	// ErrNotConfigured: the call needs an option or a value its owner was not
	// given (a plugin's state, its commands).
	ErrNotConfigured = errors.New("not configured")
	// ErrNilArgument: a nil value (a typed nil too) where one is required.
	ErrNilArgument = errors.New("nil argument")
	// ErrRunning: Run called while another Run of the same job is going on.
	ErrRunning = errors.New("already running")
)
