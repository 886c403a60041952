// This file: the one capped exponential backoff that every retry
// loop of the module uses.

package clock

import (
	"math/rand/v2"
	"time"
)

// Backoff returns the wait before retry number n (1 for the first retry): first,
// doubled for each further retry, capped at limit. Up to half of it is taken off at
// random, so that many clients that failed together do not retry together.
// first <= 0 yields 0.
func Backoff(n int, first, limit time.Duration) time.Duration {
	if first <= 0 {
		return 0
	}
	d := first
	for i := 1; i < n && d < limit; i++ {
		if d > limit/2 { // doubling would pass the cap, or overflow
			d = limit
			break
		}
		d *= 2
	}
	d = min(d, limit)
	if half := int64(d / 2); half > 0 {
		d -= time.Duration(rand.Int64N(half + 1))
	}
	return d
}
