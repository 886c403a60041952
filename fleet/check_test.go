package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// TestCheckFailsUntilLeadershipIsKnown: the "leadership" readiness check
// fails before Run, passes in the leader and in a follower once Redis has
// answered, fails in a follower cut off from Redis (and passes again when
// it is back), and fails once Run returned. OnChange sees the leader's
// transitions, not the follower's knowledge.
func TestCheckFailsUntilLeadershipIsKnown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)

	idle, err := NewLease(newClient(t, srv.Addr()), "bot-check", shortLease)
	require.NoError(t, err)
	require.ErrorIs(t, idle.Check(context.Background()), ErrLeadershipUnknown, "before Run")

	changes := make(chan LeaseState, 16)
	cfg := shortLease
	cfg.OnChange = func(s LeaseState) { changes <- s }
	leader := startContender(t, srv.Addr(), "bot-check", cfg, blockUntilDone)
	require.Eventually(t, func() bool { return leader.lease.State().Leader }, 5*time.Second, 5*time.Millisecond)
	assert.NoError(t, leader.lease.Check(context.Background()))
	first := <-changes
	assert.True(t, first.Leader)
	assert.True(t, first.known)

	follower := startContender(t, srv.Addr(), "bot-check", cfg, blockUntilDone)
	require.Eventually(t, func() bool { return follower.lease.Check(context.Background()) == nil }, 5*time.Second, 5*time.Millisecond)
	assert.False(t, follower.lease.State().Leader)

	follower.part.cut.Store(true)
	require.Eventually(t, func() bool {
		return follower.lease.Check(context.Background()) != nil
	}, 5*time.Second, 5*time.Millisecond, "a follower cut off from Redis does not know who leads")
	assert.NoError(t, leader.lease.Check(context.Background()))
	follower.part.cut.Store(false)
	require.Eventually(t, func() bool { return follower.lease.Check(context.Background()) == nil }, 5*time.Second, 5*time.Millisecond)

	require.NoError(t, follower.stopAndWait(t))
	assert.ErrorIs(t, follower.lease.Check(context.Background()), ErrLeadershipUnknown, "after Run returned")
	require.NoError(t, leader.stopAndWait(t))
	assert.ErrorIs(t, leader.lease.Check(context.Background()), ErrLeadershipUnknown)
	last := <-changes
	assert.False(t, last.Leader)
	assert.Empty(t, changes, "the follower's knowledge is no transition")
}
