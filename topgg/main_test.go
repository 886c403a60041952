package topgg_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a goroutine outlives the tests: the client starts none
// of its own, and its connections close with the servers they talk to.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
