package redistest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The HA tests' timings: a lease of 2 s outlives neither a Sentinel nor a
// Cluster failover (2-4 s here), so each failover makes a new election on
// the promoted replica, which is what the token guarantee is about.
const (
	HATTL  = 2 * time.Second
	HAWait = 30 * time.Second
	HATick = 10 * time.Millisecond
	HABot  = "habot"
)

// AssertIncreasing checks that fencing tokens only go up, never repeating.
func AssertIncreasing(t testing.TB, tokens []int64) {
	t.Helper()
	assert.IsIncreasing(t, tokens, "a term's token is not above the one before: %v", tokens)
}
