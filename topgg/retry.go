package topgg

import (
	"errors"
	"time"

	"github.com/dblkit/go-topgg/internal/backoff"
)

// RetryPolicy says how idempotent calls are retried. Calls that are not idempotent
// (announcements) are never sent twice, whatever the policy.
type RetryPolicy struct {
	// MaxAttempts is the number of tries in all, the first included; 1 turns retries off.
	MaxAttempts int
	// MinBackoff is the wait before the first retry; each next wait doubles, up to MaxBackoff.
	// A random jitter of up to half the wait is taken off so that clients spread out.
	MinBackoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest block (from a Retry-After, on any status) that a
	// call waits out before sending, whether its own answer or another call's
	// taught it; a longer one returns a *RateLimitError at once. Calls that are
	// sent only once (announcements, or MaxAttempts 1) never wait for a block.
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy returns the policy a new Client uses: 4 attempts, backoff from
// 250 ms to 8 s, and Retry-After waited out up to 5 s.
func DefaultRetryPolicy() RetryPolicy {
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

// backoff returns the wait before retry number n (1 for the first retry).
func (p RetryPolicy) backoff(n int) time.Duration {
	return backoff.Exp(n, p.MinBackoff, p.MaxBackoff)
}
