package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestFence: two processes share the store; once the newer leader (token
// 2) wrote, every leader write of the older one (token 1), SaveHash and
// Reminded included, is refused and commits nothing, while its webhook
// Ingests (no checkpoint) still go in.
func TestFence(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	old, cur, oldL, _ := twoTerms(t, pool, 2, pgstore.Config{})
	var err error

	a, b := vote(1, base), vote(2, base)
	ingest(t, old, &voterewards.Checkpoint{Cursor: "old"}, a)
	require.NoError(t, old.Delivered(ctx, a, true), "token 1 writes while no newer token was seen")
	ingest(t, cur, &voterewards.Checkpoint{Cursor: "new"}, b)

	_, err = old.Ingest(ctx, &voterewards.Checkpoint{Cursor: "stale"}, []voterewards.Vote{vote(3, base)}, voterewards.DefaultStreakGrace)
	assert.ErrorIs(t, err, pgstore.ErrFenced, "Ingest with a checkpoint")
	assert.ErrorIs(t, old.Delivered(ctx, b, true), pgstore.ErrFenced)
	assert.ErrorIs(t, old.Expired(ctx, a), pgstore.ErrFenced)
	assert.ErrorIs(t, old.Prune(ctx, base.Add(voterewards.VoteLifetime*3), base.Add(voterewards.VoteLifetime*3)), pgstore.ErrFenced)
	called := false
	err = old.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { called = true; return nil })(ctx, b)
	assert.ErrorIs(t, err, pgstore.ErrFenced, "the reward transaction")
	assert.False(t, called, "a fenced process does not run the handler")
	require.NoError(t, cur.SetReminder(ctx, "1", true))
	assert.ErrorIs(t, old.SaveHash(ctx, "stale"), pgstore.ErrFenced)
	assert.ErrorIs(t, old.Reminded(ctx, "1", "1@stale"), pgstore.ErrFenced)
	hash, err := cur.LoadHash(ctx)
	require.NoError(t, err)
	assert.Empty(t, hash, "the refused SaveHash saved nothing")
	_, last, err := cur.Reminder(ctx, "1")
	require.NoError(t, err)
	assert.Empty(t, last, "nor did the refused Reminded")

	snap, err := cur.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "new", snap.Checkpoint.Cursor, "the refused Ingest saved nothing")
	assert.Len(t, snap.Seen, 2, "nor added its vote; Prune removed nothing")
	assert.Len(t, snap.Pending, 1, "b is still pending")
	assert.Len(t, snap.Expiries, 1, "a's expiry is still pending")
	calls := 0
	require.NoError(t, cur.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { calls++; return nil })(ctx, b))
	assert.Equal(t, 1, calls, "the refused reward was not marked done")

	assert.Len(t, ingest(t, old, nil, vote(4, base)), 1, "a webhook Ingest is no leader write: not fenced")

	oldL.tok.Store(3)
	require.NoError(t, old.Delivered(ctx, b, false), "a newer term of the old process writes again")
	assert.ErrorIs(t, cur.Delivered(ctx, b, false), pgstore.ErrFenced, "and fences the other")
}

// TestFenceZeroTokenRefused: a process that is not leading (token 0) has
// every leader write refused before it touches the database.
func TestFenceZeroTokenRefused(t *testing.T) {
	ctx := context.Background()
	var l lease
	s := fenced(t, open(t, pgstore.Config{}), l.token)
	v := ingest(t, s, nil, vote(1, base))[0]
	_, err := s.Ingest(ctx, &voterewards.Checkpoint{Cursor: "c"}, nil, voterewards.DefaultStreakGrace)
	assert.ErrorIs(t, err, pgstore.ErrFenced)
	assert.ErrorIs(t, s.Delivered(ctx, v, false), pgstore.ErrFenced)
	assert.ErrorIs(t, s.Expired(ctx, v), pgstore.ErrFenced)
	assert.ErrorIs(t, s.Prune(ctx, base, base), pgstore.ErrFenced)
	assert.ErrorIs(t, s.SaveHash(ctx, "h"), pgstore.ErrFenced)
	require.NoError(t, s.SetReminder(ctx, "1", true), "an opt-in is no leader write")
	assert.ErrorIs(t, s.Reminded(ctx, "1", "1@k"), pgstore.ErrFenced)
	called := false
	assert.ErrorIs(t, s.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { called = true; return nil })(ctx, v), pgstore.ErrFenced)
	assert.False(t, called)
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Pending, 1)
	assert.Empty(t, snap.Checkpoint.Cursor)
}
