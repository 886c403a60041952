package topgg

import (
	"context"
	"errors"
	"net/http"
)

// Retryable reports whether the call that returned err may succeed if made again
// later, unchanged: a connection failure, a 5xx, a 408 or a rate limit (wait for
// [RateLimitError.RetryAfter] first). It is false for nil, for a broken rule
// ([ValidationError]), for a refusal that no retry mends (4xx other than 408 and
// 429, an invalid token included), for a cancelled or expired context, and for
// errors this package did not make. Every package of the module decides with it.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var r interface{ retryable() bool }
	if errors.As(err, &r) {
		return r.retryable()
	}
	return false
}

func (e *RequestError) retryable() bool   { return true }
func (e *DecodeError) retryable() bool    { return e.Status >= 500 }
func (e *RateLimitError) retryable() bool { return true }
func (e *ValidationError) retryable() bool {
	return false
}

func (e *APIError) retryable() bool {
	return e.StatusCode >= 500 || e.StatusCode == http.StatusRequestTimeout || e.StatusCode == http.StatusTooManyRequests
}
