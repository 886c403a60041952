package redisstate

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
)

// newClient returns a client of addr with its own pool (a separate process).
func newClient(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}, // as fleet.NewClient does
		DialTimeout:              200 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// runLease runs bot's lease on rdb until the test ends; its terms hold
// leadership until then.
func runLease(t testing.TB, rdb redis.UniversalClient, bot string) *fleet.Lease {
	t.Helper()
	lease, err := fleet.NewLease(rdb, bot, fleet.LeaseConfig{TTL: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- lease.Run(ctx, func(ctx context.Context, _ int64) error { <-ctx.Done(); return nil })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("Lease.Run did not return within 10s of cancel")
		}
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
