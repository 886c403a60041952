package fleet

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// TestLeaseOnChangePanicIsContained: a panicking OnChange hook must not end
// Run nor the leader's work; the log names the hook.
func TestLeaseOnChangePanicIsContained(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var calls atomic.Int32
	cfg := shortLease
	cfg.OnChange = func(LeaseState) {
		calls.Add(1)
		panic("metrics hook bug")
	}
	var led atomic.Bool
	c := startContender(t, srv.Addr(), "onchange", cfg, func(ctx context.Context, tok int64) error {
		led.Store(true)
		return blockUntilDone(ctx, tok)
	})
	require.Eventually(t, func() bool { return led.Load() && c.lease.State().Leader }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, int32(1), calls.Load())
	assert.Contains(t, c.log.String(), "OnChange panicked")
	assert.Contains(t, c.log.String(), "metrics hook bug")
	assert.NotContains(t, c.log.String(), "goroutine ", "no stack in the log line")
	// Run ends normally (the cleanup checks its nil error); the end of the
	// term calls the hook again, contained again.
	require.NoError(t, c.stopAndWait(t))
	assert.Equal(t, int32(2), calls.Load())
	assert.False(t, c.lease.State().Leader)
}

// TestLeaseKeyExpiringInTheFarFutureIsClampedAndLoggedOnce plants a lease
// key whose expiry is a year away (no holder with our TTL sets that): the
// contender does not trust the remaining time, polls every TTL, logs the key
// once, and leads as soon as the key is gone.
func TestLeaseKeyExpiringInTheFarFutureIsClampedAndLoggedOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	key := Key("farexp", "lease")
	require.NoError(t, rdb.Set(ctx, key, "someone-else", 365*24*time.Hour).Err())
	c := startContender(t, srv.Addr(), "farexp", shortLease, blockUntilDone)
	require.Eventually(t, func() bool { return strings.Contains(c.log.String(), "expires later than any holder sets") },
		5*time.Second, 5*time.Millisecond)
	// Two more TTLs: it keeps trying (the wait is clamped to TTL) and does
	// not log the same key again.
	assert.Never(t, func() bool { return c.lease.State().Leader }, 2*shortLease.TTL, 10*time.Millisecond)
	assert.Equal(t, 1, strings.Count(c.log.String(), "expires later than any holder sets"))
	require.NoError(t, rdb.Del(ctx, key).Err())
	// Within a TTL (not a year): it leads.
	require.Eventually(t, func() bool { return c.lease.State().Leader }, 3*shortLease.TTL, 5*time.Millisecond)
}
