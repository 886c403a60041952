package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// pointsTable makes the bot's own table, credited in the reward's transaction.
func pointsTable(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	_, err := pool.Exec(context.Background(), "CREATE TABLE points (voter text PRIMARY KEY, points int NOT NULL)")
	require.NoError(t, err)
}

// credit is a TxHandler adding the vote's weight to its voter's points.
func credit(calls *int) pgstore.TxHandler {
	return func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		*calls++
		_, err := tx.Exec(ctx, `INSERT INTO points VALUES ($1, $2)
			ON CONFLICT (voter) DO UPDATE SET points = points.points + EXCLUDED.points`, v.PlatformID, v.Weight)
		return err
	}
}

func points(t *testing.T, pool *pgxpool.Pool, voter string) int {
	t.Helper()
	var n int
	err := pool.QueryRow(context.Background(), "SELECT points FROM points WHERE voter = $1", voter).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0
	}
	require.NoError(t, err)
	return n
}

// TestRewardOnce: the handler's write and the done mark are one
// transaction; a second call (a crash before Delivered, a redelivery, another
// leader) finds the mark and does not call the handler.
func TestRewardOnce(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	pointsTable(t, pool)
	v := ingest(t, s, nil, vote(1, base))[0]
	calls := 0
	reward := s.Reward(credit(&calls))
	require.NoError(t, reward(ctx, v))
	require.NoError(t, reward(ctx, v), "a second call after a crash before Delivered")
	assert.Equal(t, 1, calls, "the handler ran once")
	assert.Equal(t, v.Weight, points(t, pool, v.PlatformID))

	require.NoError(t, s.Delivered(ctx, v, true))
	require.NoError(t, reward(ctx, v), "a redelivery after Delivered")
	assert.Equal(t, 1, calls)
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Pending)
	require.Len(t, snap.Expiries, 1)
}

// TestRewardFailureRollsBack: a failing handler's writes roll back, the
// vote is not marked, and the retry rewards it once; the handler's error
// comes back as it returned it.
func TestRewardFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	pointsTable(t, pool)
	v := ingest(t, s, nil, vote(1, base))[0]
	boom := errors.New("boom")
	calls := 0
	failing := s.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		require.NoError(t, credit(&calls)(ctx, tx, v))
		return boom
	})
	assert.ErrorIs(t, failing(ctx, v), boom)
	assert.Zero(t, points(t, pool, v.PlatformID), "the failed handler's write rolled back")

	panicking := s.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		require.NoError(t, credit(&calls)(ctx, tx, v))
		panic("handler bug")
	})
	assert.Panics(t, func() { _ = panicking(ctx, v) })
	assert.Zero(t, points(t, pool, v.PlatformID), "the panicking handler's write rolled back")

	require.NoError(t, s.Reward(credit(&calls))(ctx, v))
	assert.Equal(t, v.Weight, points(t, pool, v.PlatformID), "the retry rewards once")
}

// TestExpiryOnce: the expiry handler has its own mark; Delivered does not
// make an expiry handled by it pending again.
func TestExpiryOnce(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgstore.Config{})
	v := ingest(t, s, nil, vote(1, base))[0]
	rewards, expiries := 0, 0
	require.NoError(t, s.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { rewards++; return nil })(ctx, v))
	require.NoError(t, s.Delivered(ctx, v, true))
	expiry := s.Expiry(func(context.Context, pgx.Tx, voterewards.Vote) error { expiries++; return nil })
	require.NoError(t, expiry(ctx, v))
	require.NoError(t, expiry(ctx, v))
	assert.Equal(t, 1, expiries)
	require.NoError(t, s.Delivered(ctx, v, true), "a repeated Delivered")
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	require.Len(t, snap.Expiries, 1, "the expiry stays pending until Expired")
	require.NoError(t, s.Expired(ctx, v))
	require.NoError(t, s.Delivered(ctx, v, true), "Delivered again after the expiry was handled")
	snap, err = s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Expiries, "an expiry handled by Expiry is not pending again")
	assert.Equal(t, 1, rewards)
}

// TestTxHandlerMisuse: a nil TxHandler and a vote the store does not hold
// are errors, not panics or silence. Reward(nil) and Expiry(nil) are nil,
// so that the Poller refuses them when it is made, not at each vote.
func TestTxHandlerMisuse(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgstore.Config{})
	assert.Nil(t, s.Reward(nil), "Reward(nil)")
	assert.Nil(t, s.Expiry(nil), "Expiry(nil)")
	srv, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	client, err := topgg.New(srv.Token(), topgg.WithBaseURL(srv.URL))
	require.NoError(t, err)
	_, err = voterewards.New(client, voterewards.Config{Store: s, OnReward: s.Reward(nil)})
	assert.Error(t, err, "a Poller rewarding with Reward(nil)")
	called := false
	err = s.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { called = true; return nil })(ctx, vote(1, base))
	assert.ErrorIs(t, err, pgstore.ErrUnknownVote)
	assert.False(t, called)
}
