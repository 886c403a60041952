package fleet

import (
	"os"
	"testing"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// TestMain turns the test binary into a helper process when asked (see
// childMain).
func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(childMain(role))
	}
	redistest.Main(m, "fleet")
}
