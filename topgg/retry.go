package topgg

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// RetryPolicy: idempotent calls get MaxAttempts tries (1: no retry), backoff
// from MinBackoff to MaxBackoff with jitter, and wait out a Retry-After of up
// to MaxRetryAfter (a longer one is a *RateLimitError at once).
type RetryPolicy struct {
	MaxAttempts            int
	MinBackoff, MaxBackoff time.Duration
	MaxRetryAfter          time.Duration
}

// defaultRetryPolicy is the policy of a new Client (see [WithRetryPolicy]).
func defaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 4, MinBackoff: 250 * time.Millisecond, MaxBackoff: 8 * time.Second, MaxRetryAfter: 5 * time.Second}
}

func (p RetryPolicy) validate() error {
	switch {
	case p.MaxAttempts < 1:
		return errors.New("topgg: RetryPolicy: MaxAttempts must be at least 1")
	case p.MinBackoff < 0 || p.MaxBackoff < p.MinBackoff:
		return errors.New("topgg: RetryPolicy: want 0 <= MinBackoff <= MaxBackoff")
	case p.MaxRetryAfter < 0:
		return errors.New("topgg: RetryPolicy: negative MaxRetryAfter")
	}
	return nil
}

// backoff returns the wait before retry number n (1 for the first retry), or
// -1 when the failure is not to be retried.
func (p RetryPolicy) backoff(n int, retry bool) time.Duration {
	if !retry {
		return -1
	}
	return clock.Backoff(n, p.MinBackoff, p.MaxBackoff)
}

// Retryable reports whether the call that returned err may succeed if made again
// unchanged: a connection failure or timeout, a 5xx but 501 and 505, a 408, 425
// or 429, a *[RateLimitError] after its RetryAfter. The first error of this
// package in err's chain decides; nil and other packages' errors are not.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var r interface{ retryable() bool }
	if errors.As(err, &r) {
		return r.retryable()
	}
	// The sentinel itself, wrapped by a caller, says "wait, then retry".
	return errors.Is(err, ErrRateLimited)
}

// retryable: a request that got no answer may get one next time, unless the
// failure is of configuration (a refused redirect or certificate).
func (e *RequestError) retryable() bool {
	_, cert := errors.AsType[*tls.CertificateVerificationError](e.Err)
	_, authority := errors.AsType[x509.UnknownAuthorityError](e.Err)
	_, host := errors.AsType[x509.HostnameError](e.Err)
	return !cert && !authority && !host && !errors.Is(e.Err, ErrUnsafeRedirect)
}

func (e *DecodeError) retryable() bool     { return false }
func (e *ValidationError) retryable() bool { return false }
func (e *RateLimitError) retryable() bool  { return e.API == nil || e.API.retryable() }
func (e *APIError) retryable() bool {
	s := e.StatusCode
	return slices.Contains([]int{http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests}, s) ||
		(s >= 500 && s < 600 && s != http.StatusNotImplemented && s != http.StatusHTTPVersionNotSupported)
}
