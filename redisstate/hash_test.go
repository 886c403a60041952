package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
)

func TestHashStoreSavesOnlyForTheNewestLeader(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	hash := strings.Repeat("ab", 32)
	a := startContender(t, srv.Addr(), "hs", shortLease, blockUntilDone)
	require.Eventually(t, func() bool { return a.lease.State().Leader }, 5*time.Second, 5*time.Millisecond)
	b := startContender(t, srv.Addr(), "hs", shortLease, blockUntilDone)
	ha, hb := newHashStore(a.lease), newHashStore(b.lease)

	got, err := hb.LoadHash(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "nothing saved yet")
	require.NoError(t, ha.SaveHash(ctx, hash))
	got, err = hb.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, hash, got, "a follower reads what the leader saved")
	require.ErrorIs(t, hb.SaveHash(ctx, "follower"), ErrNoFence)

	// A newer term (as if another process won while a was paused): a's
	// SaveHash is refused although a still believes it leads.
	require.NoError(t, rdb.Incr(ctx, Key("hs", "fence")).Err())
	require.True(t, a.lease.State().Leader)
	require.ErrorIs(t, ha.SaveHash(ctx, "stale"), ErrFenced)
	got, err = ha.LoadHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, hash, got)
}
