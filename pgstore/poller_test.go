package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/serverproc"
	"github.com/dblkit/go-topgg/pgstore"
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
	serverproc.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)
	assert.Len(t, callsCh, users, "one reward per vote")
	for u := range users {
		assert.Equal(t, 1+u%2, points(t, pool, fmt.Sprintf("3%017d", u)), "user %d credited once", u)
	}
	board, err := p.Leaderboard(ctx, time.Time{}, 10)
	require.NoError(t, err)
	require.Len(t, board, users)
	assert.Equal(t, 2, board[0].Total)
}
