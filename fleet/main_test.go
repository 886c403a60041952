package fleet_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain turns the test binary into a helper process when asked (see
// childMain), and checks that no goroutine outlives the tests.
func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(childMain(role))
	}
	goleak.VerifyTestMain(m)
}
