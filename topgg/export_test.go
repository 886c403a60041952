package topgg

import "time"

// WithLegacyLimit sets the client's v0 limit (the service's 60 a minute) to n
// calls in any window of length per; n = 0: off.
func WithLegacyLimit(n int, per time.Duration) Option {
	return func(c *config) error { c.legacyN, c.legacyPer = n, per; return nil }
}

// Validate applies a payload's rules without a client, for the tests.
func Validate(v any) error {
	switch v := v.(type) {
	case ProjectUpdate:
		return v.validate()
	case NewAnnouncement:
		return v.validate()
	case Metrics:
		return v.validate("metrics")
	}
	return nil
}

// BatchEntries is what PostMetricsBatch encodes, for the tests.
var BatchEntries = batchEntries

// NoRetries is a policy that sends every call once.
func NoRetries() RetryPolicy { return RetryPolicy{MaxAttempts: 1} }
