package redisstate

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// TestMain says in one line why the Redis tests skip when redis-server is
// missing, and checks that no goroutine outlives the tests.
func TestMain(m *testing.M) {
	if !redistest.Announce("redisstate") {
		os.Exit(1)
	}
	// The restart and failover tests stop Redis on purpose: go-redis's pool
	// would print every failed dial to stderr through its process-wide logger.
	redis.SetLogger(quiet{})
	goleak.VerifyTestMain(m)
}

// quiet is a go-redis logger that prints nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
