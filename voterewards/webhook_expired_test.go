package voterewards_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestExpiredWebhookVoteIsNotCountedAgain: the poll rewards an expired vote
// from the history and prunes it from the dedup set (it lies before the
// newest vote less the overlap); a webhook delivery of that vote arriving
// afterwards (a replay, or a fake's late retry) is answered nil and neither
// rewarded nor counted a second time. Without the check in IngestWebhook the
// pruned vote is stored again: two rewards, Votes 2.
func TestExpiredWebhookVoteIsNotCountedAgain(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now().UTC().Truncate(time.Second)
	old := now.Add(-13 * time.Hour)
	srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), Weight: 1, CreatedAt: old, ExpiresAt: old.Add(voterewards.VoteLifetime)})
	srv.AddVote(topggtest.Vote{UserID: userID(2), PlatformID: platformID(2), Weight: 1, CreatedAt: now.Add(-10 * time.Minute), ExpiresAt: now.Add(-10*time.Minute + voterewards.VoteLifetime)})

	rec := newRecorder()
	store := voterewards.NewMemoryStore()
	p := startPoller(t, newClient(t, srv), voterewards.Config{Store: store, OnReward: rec.handle, Lookback: 24 * time.Hour})
	require.Eventually(t, func() bool { return rec.total() == 2 }, 5*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { // pruned: the dedup set no longer holds the old vote
		snap, err := store.Load(context.Background())
		return err == nil && len(snap.Seen) == 1
	}, 5*time.Second, 5*time.Millisecond)

	require.NoError(t, p.IngestWebhook(context.Background(), webhook.Vote{Version: 1, ID: "late", UserID: userID(1), PlatformID: platformID(1),
		Weight: 1, CreatedAt: old.Add(300 * time.Nanosecond), ExpiresAt: old.Add(voterewards.VoteLifetime)}))
	assert.Never(t, func() bool { return rec.total() != 2 }, 200*time.Millisecond, 10*time.Millisecond, "the late webhook vote was rewarded again")
	st, err := p.Stats(context.Background(), platformID(1))
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes)
}
