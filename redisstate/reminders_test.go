package redisstate

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
)

// TestRemindersOptInAnywhereRecordFencedByTheLeader: any process sets a
// choice; only the current leader records a reminder (a follower gets
// fleet.ErrNoFence, a stale leader fleet.ErrFenced), and only for a user still
// opted in; turning reminders on again keeps the record. The example bot's old
// set is read as opted in and moved to the hash on the next change.
func TestRemindersOptInAnywhereRecordFencedByTheLeader(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	ra, _ := leadingState(t, srv, "rm")
	rb, _ := startProcess(t, srv.Addr(), "rm")

	require.NoError(t, rb.SetReminder(ctx, "1", true), "a follower records an opt-in")
	require.NoError(t, ra.Reminded(ctx, "1", "1@k"))
	require.ErrorIs(t, rb.Reminded(ctx, "1", "1@other"), fleet.ErrNoFence)
	require.NoError(t, ra.Reminded(ctx, "2", "2@k"), "not opted in: nothing recorded")
	require.NoError(t, rb.SetReminder(ctx, "1", true))
	check := func(user string, wantOn bool, wantLast string) {
		t.Helper()
		on, last, err := rb.Reminder(ctx, user)
		require.NoError(t, err)
		assert.Equal(t, wantOn, on, user)
		assert.Equal(t, wantLast, last, user)
	}
	check("1", true, "1@k")
	check("2", false, "")

	require.NoError(t, rdb.SAdd(ctx, fleet.Key("rm", "set:reminders"), "3").Err())
	check("3", true, "")
	require.NoError(t, ra.Reminded(ctx, "3", "3@k"))
	check("3", true, "3@k")
	assert.False(t, rdb.SIsMember(ctx, fleet.Key("rm", "set:reminders"), "3").Val(), "moved to the hash")
	require.NoError(t, rdb.SAdd(ctx, fleet.Key("rm", "set:reminders"), "4").Err())
	require.NoError(t, rb.SetReminder(ctx, "4", false))
	check("4", false, "")

	require.NoError(t, rdb.Incr(ctx, fleet.Key("rm", "fence")).Err()) // a newer term
	require.ErrorIs(t, ra.Reminded(ctx, "1", "1@new"), fleet.ErrFenced)
	check("1", true, "1@k")
}
