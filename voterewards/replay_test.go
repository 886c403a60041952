package voterewards_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// replayPage is a page of the v1 history holding v alone, as the service
// would send it again.
func replayPage(v topggtest.Vote) string {
	return fmt.Sprintf(`{"data":[{"user_id":%q,"platform_id":%q,"weight":%d,"created_at":%q,"expires_at":%q}]}`,
		v.UserID, v.PlatformID, v.Weight, v.CreatedAt.Format(time.RFC3339Nano), v.ExpiresAt.Format(time.RFC3339Nano))
}

// TestHistoryReplayOfAPrunedVoteIsNotRewardedAgain: the poll rewards an
// expired vote (a long lookback) and prunes it from the dedup set; then the
// service sends that vote again (a stale page, a cursor that went back). It is
// recognised whatever the lookback and the prune: not stored, not rewarded,
// not counted a second time. Before, the pruned vote was new again.
func TestHistoryReplayOfAPrunedVoteIsNotRewardedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := newServer(t)
	now := time.Now().UTC().Truncate(time.Second)
	old := now.Add(-13 * time.Hour)
	srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), Weight: 1, CreatedAt: old, ExpiresAt: old.Add(voterewards.VoteLifetime)})
	srv.AddVote(topggtest.Vote{UserID: userID(2), PlatformID: platformID(2), Weight: 1, CreatedAt: now.Add(-10 * time.Minute), ExpiresAt: now.Add(-10*time.Minute + voterewards.VoteLifetime)})

	rec := newRecorder()
	store := voterewards.NewMemoryStore()
	startPoller(t, newClient(t, srv), voterewards.Config{Store: store, OnReward: rec.handle, Lookback: 24 * time.Hour})
	require.Eventually(t, func() bool { return rec.total() == 2 }, 5*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { // pruned: the dedup set no longer holds the old vote
		snap, err := store.Load(ctx)
		return err == nil && len(snap.Seen) == 1
	}, 5*time.Second, 5*time.Millisecond)

	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 200, Times: 3, Body: replayPage(srv.Votes()[0])}))
	require.Eventually(t, func() bool { return srv.PendingFaults() == 0 }, 5*time.Second, 5*time.Millisecond, "the replays were not read")
	n := len(votesRequests(srv))
	require.Eventually(t, func() bool { return len(votesRequests(srv)) > n }, 5*time.Second, 5*time.Millisecond, "polling stopped")

	st, err := store.Stats(ctx, platformID(1))
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes, "the replayed vote was counted again")
	snap, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Seen, 1, "the replayed vote was stored again")
	assert.Empty(t, snap.Pending)
	assert.Equal(t, 2, rec.total(), "the replayed vote was rewarded again")
}
