package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestPollerRewardsInItsTransaction runs the package example's flow on a
// real server: votes from the history reach the Poller, each is credited
// once in the reward's transaction and recorded as delivered, and the
// ledger and the board know them.
func TestPollerRewardsInItsTransaction(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	store, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	pointsTable(t, pool)

	srv, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	const users = 5
	for u := range users {
		srv.AddVote(topggtest.Vote{UserID: fmt.Sprintf("8%017d", u), PlatformID: fmt.Sprintf("3%017d", u),
			Weight: 1 + u%2, CreatedAt: time.Now().Add(-time.Hour)})
	}
	client, err := srv.NewClient()
	require.NoError(t, err)
	callsCh := make(chan struct{}, 64) // handler calls, from the Poller's workers
	p, err := voterewards.New(client, voterewards.Config{
		Store: store,
		OnReward: store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			callsCh <- struct{}{}
			return credit(new(int))(ctx, tx, v)
		}),
	})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	require.Eventually(t, func() bool {
		snap, err := store.Load(ctx)
		return err == nil && len(snap.Seen) == users && len(snap.Pending) == 0
	}, 20*time.Second, 20*time.Millisecond, "every vote delivered and recorded")
	cancel()
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)
	assert.Len(t, callsCh, users, "one reward per vote")
	for u := range users {
		assert.Equal(t, 1+u%2, points(t, pool, fmt.Sprintf("3%017d", u)), "user %d credited once", u)
	}
	board, err := store.Leaderboard(ctx, time.Time{}, 10)
	require.NoError(t, err)
	require.Len(t, board, users)
	assert.Equal(t, 2, board[0].Total)
}

// TestPollerDeliversAgainAfterTheDatabaseRestarts: PostgreSQL is killed
// with a transactional reward in flight and stays down for longer than the
// handler's retries last (Concurrency 8, RetryDelay 20 ms, MaxAttempts 5).
// Restarted, the same Run rewards that vote, once: the attempts that met the
// dead connections were the store's failures, not the handler's, and the
// vote was not parked until the next Run.
func TestPollerDeliversAgainAfterTheDatabaseRestarts(t *testing.T) {
	ctx := context.Background()
	srv := pgstoretest.Start(t) // its own server: this test kills it
	pool := srv.Pool(t)
	store, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	pointsTable(t, pool)
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	const users = 10
	for u := range users {
		tg.AddVote(topggtest.Vote{UserID: fmt.Sprintf("8%017d", u), PlatformID: fmt.Sprintf("3%017d", u),
			Weight: 1, CreatedAt: time.Now().Add(-time.Hour)})
	}
	client, err := tg.NewClient()
	require.NoError(t, err)
	inFlight, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p, err := voterewards.New(client, voterewards.Config{
		Store: store, Concurrency: 8, RetryDelay: 20 * time.Millisecond, MaxAttempts: 5, Interval: 50 * time.Millisecond,
		OnReward: store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			once.Do(func() { close(inFlight); <-release }) // the first reward is in flight at the kill
			return credit(new(int))(ctx, tx, v)
		}),
	})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Error("Run did not return")
		}
	})
	select {
	case <-inFlight:
	case <-time.After(20 * time.Second):
		t.Fatal("no reward started")
	}
	srv.Kill(t)
	close(release)
	// Down for longer than the handler's five attempts: the poll fails on the
	// store meanwhile, request after request.
	n := len(tg.Requests())
	require.Eventually(t, func() bool { return len(tg.Requests()) >= n+10 }, 20*time.Second, 10*time.Millisecond, "polling stopped")
	srv.Restart(t)
	require.Eventually(t, func() bool {
		snap, err := store.Load(ctx)
		return err == nil && len(snap.Seen) == users && len(snap.Pending) == 0
	}, 30*time.Second, 20*time.Millisecond, "a vote whose reward met the restart was not delivered again in this Run")
	for u := range users {
		assert.Equal(t, 1, points(t, pool, fmt.Sprintf("3%017d", u)), "user %d credited more or less than once", u)
	}
}

// TestHistoryReplayOfAPrunedVoteIsNotRewardedAgain: a transactional reward
// for an expired vote (a long lookback), pruned from the dedup set; the
// service then sends the vote again. PostgreSQL would have made it a new
// row, rewarded again in its own transaction: it is recognised as the
// pruned vote, so the bot's points and the ledger count it once.
func TestHistoryReplayOfAPrunedVoteIsNotRewardedAgain(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	store, err := pgstore.Open(ctx, pool, pgstore.Config{Retention: time.Hour})
	require.NoError(t, err)
	pointsTable(t, pool)
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	now := time.Now().UTC().Truncate(time.Second)
	old := topggtest.Vote{UserID: "800000000000000001", PlatformID: "300000000000000001", Weight: 1,
		CreatedAt: now.Add(-13 * time.Hour), ExpiresAt: now.Add(-time.Hour)}
	tg.AddVote(old, topggtest.Vote{UserID: "800000000000000002", PlatformID: "300000000000000002", Weight: 1,
		CreatedAt: now.Add(-10 * time.Minute)})
	client, err := tg.NewClient()
	require.NoError(t, err)
	p, err := voterewards.New(client, voterewards.Config{Store: store, Lookback: 24 * time.Hour, Interval: 20 * time.Millisecond,
		OnReward: store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error { return credit(new(int))(ctx, tx, v) })})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })
	require.Eventually(t, func() bool {
		snap, err := store.Load(ctx)
		return err == nil && len(snap.Seen) == 1 && len(snap.Pending) == 0 // both rewarded, the old one pruned
	}, 20*time.Second, 10*time.Millisecond)

	body := fmt.Sprintf(`{"data":[{"user_id":%q,"platform_id":%q,"weight":1,"created_at":%q,"expires_at":%q}]}`,
		old.UserID, old.PlatformID, old.CreatedAt.Format(time.RFC3339Nano), old.ExpiresAt.Format(time.RFC3339Nano))
	require.NoError(t, tg.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 200, Times: 3, Body: body}))
	require.Eventually(t, func() bool { return tg.PendingFaults() == 0 }, 20*time.Second, 10*time.Millisecond, "the replays were not read")
	n := len(tg.Requests())
	require.Eventually(t, func() bool { return len(tg.Requests()) > n }, 20*time.Second, 10*time.Millisecond, "polling stopped")
	st, err := store.Stats(ctx, old.PlatformID)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes, "the replayed vote was counted again")
	snap, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Pending, "the replayed vote was stored again")
	assert.Equal(t, 1, points(t, pool, old.PlatformID), "the replayed vote was rewarded again in its transaction")
}
