package redisstate

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
)

func TestHashSavedOnlyByTheNewestLeader(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	hash := strings.Repeat("ab", 32)
	a, lease := leadingState(t, srv, "hs")
	b, _ := startProcess(t, srv.Addr(), "hs")

	got, err := b.LoadHash(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "nothing saved yet")
	require.NoError(t, a.SaveHash(ctx, hash))
	got, err = b.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, hash, got, "a follower reads what the leader saved")
	require.ErrorIs(t, b.SaveHash(ctx, "follower"), fleet.ErrNoFence)

	// A newer term (as if another process won while a was paused): a's
	// SaveHash is refused although a still believes it leads.
	require.NoError(t, rdb.Incr(ctx, fleet.Key("hs", "fence")).Err())
	require.True(t, lease.State().Leader)
	require.ErrorIs(t, a.SaveHash(ctx, "stale"), fleet.ErrFenced)
	got, err = a.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, hash, got)
}
