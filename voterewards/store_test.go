package voterewards_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

func storeVote(u int, created, expires time.Time) voterewards.Vote {
	tv := topgg.Vote{UserID: userID(u), PlatformID: platformID(u), Weight: 1 + u%2, CreatedAt: created.UTC(), ExpiresAt: expires.UTC()}
	return voterewards.Vote{Vote: tv, Key: voterewards.VoteKey(tv)}
}

func keys(votes []voterewards.Vote) []string {
	out := []string{}
	for _, v := range votes {
		out = append(out, v.Key)
	}
	return out
}

// testStore runs the Store contract against s; reopen returns the same store
// after a restart (or s itself for a memory store).
func testStore(t *testing.T, s voterewards.Store, reopen func() voterewards.Store) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	old := storeVote(1, now.Add(-13*time.Hour), now.Add(-time.Hour))
	mid := storeVote(2, now.Add(-2*time.Hour), now.Add(10*time.Hour))
	recent := storeVote(3, now.Add(-time.Minute+1), now.Add(12*time.Hour))
	again := storeVote(1, now.Add(-time.Hour), now.Add(11*time.Hour)) // same user, later vote

	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Pending)
	assert.Equal(t, "", snap.Checkpoint.Cursor)

	cp := voterewards.Checkpoint{Cursor: "c1", LastSeen: mid.CreatedAt, Since: now.Add(-24 * time.Hour)}
	added, err := s.Ingest(ctx, cp, []voterewards.Vote{old, mid, mid})
	require.NoError(t, err)
	assert.Equal(t, keys([]voterewards.Vote{old, mid}), keys(added), "a repeat inside one batch is dropped")
	cp = voterewards.Checkpoint{Cursor: "c2", LastSeen: recent.CreatedAt, Since: cp.Since}
	added, err = s.Ingest(ctx, cp, []voterewards.Vote{old, recent, again})
	require.NoError(t, err)
	assert.Equal(t, keys([]voterewards.Vote{recent, again}), keys(added))

	require.NoError(t, s.Delivered(ctx, old, true))
	require.NoError(t, s.Delivered(ctx, mid, true))
	require.NoError(t, s.Delivered(ctx, again, false))
	require.NoError(t, s.Expired(ctx, mid))

	s = reopen()
	snap, err = s.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, "c2", snap.Checkpoint.Cursor)
	assert.True(t, snap.Checkpoint.LastSeen.Equal(recent.CreatedAt))
	assert.True(t, snap.Checkpoint.Since.Equal(cp.Since))
	assert.Equal(t, keys([]voterewards.Vote{recent}), keys(snap.Pending))
	assert.Equal(t, keys([]voterewards.Vote{old}), keys(snap.Expiries))
	assert.ElementsMatch(t, keys([]voterewards.Vote{old, mid, again, recent}), keys(snap.Seen))
	assert.Equal(t, recent, snap.Pending[0], "votes come back as they went in")

	// Prune: only what is both before the window and expired.
	require.NoError(t, s.Prune(ctx, now.Add(-30*time.Minute), now))
	snap, err = s.Load(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, keys([]voterewards.Vote{mid, again, recent}), keys(snap.Seen))
	assert.Equal(t, keys([]voterewards.Vote{old}), keys(snap.Expiries), "pruning leaves pending work alone")
}

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	s := voterewards.NewMemoryStore()
	testStore(t, s, func() voterewards.Store { return s })
}

func TestBoltStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := voterewards.OpenStore(dir)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, voterewards.StoreFile), s.Path())
	t.Cleanup(func() { _ = s.Close() })
	testStore(t, s, func() voterewards.Store {
		require.NoError(t, s.Close())
		s, err = voterewards.OpenStore(dir, voterewards.WithoutFsync())
		require.NoError(t, err)
		return s
	})
}

func TestOpenStoreTwiceIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := voterewards.OpenStore(dir)
	require.NoError(t, err)
	start := time.Now()
	second, err := voterewards.OpenStore(dir)
	require.ErrorIs(t, err, voterewards.ErrLocked)
	assert.Nil(t, second)
	assert.Contains(t, err.Error(), dir)
	assert.Less(t, time.Since(start), 3*time.Second, "fails fast, does not hang")
	require.NoError(t, first.Close())

	again, err := voterewards.OpenStore(dir)
	require.NoError(t, err, "free again once closed")
	require.NoError(t, again.Close())
}
