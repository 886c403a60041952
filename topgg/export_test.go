package topgg

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
