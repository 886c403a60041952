package fleet

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// TestMain turns the test binary into a helper process when asked (see
// childMain), says in one line why the Redis tests skip when redis-server is
// missing, and checks that no goroutine outlives the tests.
func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(childMain(role))
	}
	if !redistest.Announce("fleet") {
		os.Exit(1)
	}
	// The fault tests stop Redis on purpose: go-redis's pool would print every
	// failed dial to stderr through its process-wide logger.
	redis.SetLogger(quiet{})
	goleak.VerifyTestMain(m)
}

// quiet is a go-redis logger that prints nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
