package fleet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The HA tests' timings: a lease of 2 s outlives neither a Sentinel nor a
// Cluster failover (2-4 s here), so each failover makes a new election on
// the promoted replica, which is what the token guarantee is about.
const (
	haTTL  = 2 * time.Second
	haWait = 30 * time.Second
	haTick = 10 * time.Millisecond
	haBot  = "habot"
)

// assertIncreasing checks that tokens only go up, never repeating.
func assertIncreasing(t *testing.T, tokens []int64) {
	t.Helper()
	for i := 1; i < len(tokens); i++ {
		assert.Greater(t, tokens[i], tokens[i-1], "term %d's token is not above the one before: %v", i, tokens)
	}
}
