package redisstate

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testkit"
)

// newClient returns a client of addr with its own pool (a separate process).
func newClient(t testing.TB, addr string) *redis.Client { return redistest.ClientOf(t, addr) }

// runLease runs bot's lease on rdb until the test ends; its terms hold
// leadership until then.
func runLease(t testing.TB, rdb redis.UniversalClient, bot string) *fleet.Lease {
	t.Helper()
	lease, err := fleet.NewLease(rdb, bot, fleet.LeaseConfig{TTL: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	testkit.Start(t, func(ctx context.Context) error {
		return lease.Run(ctx, func(ctx context.Context, _ int64) error { <-ctx.Done(); return nil })
	})
	return lease
}

// startProcess is one process of bot on addr: its own client, its lease
// (running until the test ends) and its state, fenced by the lease's token
// as the plugin fences it.
func startProcess(t testing.TB, addr, bot string) (*State, *fleet.Lease) {
	t.Helper()
	rdb := newClient(t, addr)
	lease := runLease(t, rdb, bot)
	s, err := New(rdb, bot)
	require.NoError(t, err)
	require.NoError(t, s.UseFence(func() int64 { return lease.State().Token }))
	return s, lease
}

// leadingState returns the state of a process of bot on srv that leads
// until the test ends (its leader writes pass the fence).
func leadingState(t testing.TB, srv *redistest.Server, bot string) (*State, *fleet.Lease) {
	t.Helper()
	s, lease := startProcess(t, srv.Addr(), bot)
	require.Eventually(t, func() bool { return lease.State().Leader }, 10*time.Second, time.Millisecond)
	return s, lease
}

// roundTrips counts what a client sends to Redis (the kit's hook).
type roundTrips = redistest.RoundTrips

func TestMain(m *testing.M) { redistest.Main(m, "redisstate") }
