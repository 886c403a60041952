package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/redistest"
)

// TestTermDeadlineFollowsRenewalsAndFailsAtOnceAfterAPause: the leader's
// context carries a term valid until the acquisition's send time + TTL -
// TTL/5, moved by each renewal to its send time + TTL - TTL/5. When the clock
// jumps past the deadline (as after a pause: every timer due at once), the
// very next CheckTerm fails, without waiting for the lease's own timer to
// notice, and the leader's context is then already cancelled with cause
// ErrLeaseLost.
func TestTermDeadlineFollowsRenewalsAndFailsAtOnceAfterAPause(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	cfg := leaseConfig{TTL: time.Second, clock: fake} // renewals every 333 ms, margin 200 ms
	leaderCtx := make(chan context.Context, 1)
	c := startContender(t, srv.Addr(), "term1", cfg, func(ctx context.Context, tok int64) error {
		leaderCtx <- ctx
		return blockUntilDone(ctx, tok)
	})
	var lctx context.Context
	select {
	case lctx = <-leaderCtx:
	case <-time.After(10 * time.Second):
		t.Fatal("never led")
	}
	require.NoError(t, CheckTerm(lctx))
	tm := clock.TermFrom(lctx)
	require.NotNil(t, tm, "the leader's context carries no term")
	left, ok := tm.Left()
	require.True(t, ok)
	assert.Equal(t, 800*time.Millisecond, left, "acquired at now: TTL - TTL/5 left")

	// The renewal at 333 ms moves the deadline to 333 ms + 800 ms.
	require.Eventually(t, func() bool { return fake.Timers() == 2 }, 5*time.Second, time.Millisecond,
		"the lease is not waiting on its renewal and loss timers")
	fake.Advance(cfg.TTL / 3)
	require.Eventually(t, func() bool { left, _ := tm.Left(); return left == 800*time.Millisecond }, 5*time.Second,
		time.Millisecond, "the renewal did not move the term's deadline")
	require.NoError(t, CheckTerm(lctx))
	require.True(t, c.lease.State().Leader)

	// A pause: the clock jumps past the deadline at once.
	fake.Advance(801 * time.Millisecond)
	require.ErrorIs(t, CheckTerm(lctx), ErrTermOver, "the first check after the pause passed")
	require.Error(t, lctx.Err(), "the failed check did not cancel the leader's context")
	assert.ErrorIs(t, context.Cause(lctx), ErrLeaseLost)
}

// TestTermEndsWithTheLeaderFunction: a straggler of the leader's work that
// checks after the function returned finds the term over, and outside a
// leader's context CheckTerm passes (one process always leads).
func TestTermEndsWithTheLeaderFunction(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	lease, err := newLease(newClient(t, srv.Addr()), "term2", shortLease)
	require.NoError(t, err)
	var kept context.Context
	err = lease.Run(context.Background(), func(ctx context.Context, _ int64) error {
		kept = ctx
		return CheckTerm(ctx)
	})
	require.NoError(t, err, "the term was over inside the leader function")
	require.ErrorIs(t, CheckTerm(kept), ErrTermOver, "a straggler passed its check after the function returned")
	require.NoError(t, CheckTerm(context.Background()))
}
