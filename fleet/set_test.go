package fleet_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/topgg"
)

// TestSetIsSharedByProcesses: what one process adds, another sees; removal too;
// bad names and a nil fleet are errors.
func TestSetIsSharedByProcesses(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	open := func() *fleet.Fleet {
		f, err := fleet.New(srv.Client(t), fleet.Config{Bot: "b", ShardCount: 1})
		require.NoError(t, err)
		return f
	}
	a, err := open().Set("reminders")
	require.NoError(t, err)
	b, err := open().Set("reminders")
	require.NoError(t, err)

	require.NoError(t, a.Add(ctx, "42"))
	ok, err := b.Contains(ctx, "42")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = b.Contains(ctx, "43")
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, b.Remove(ctx, "42"))
	ok, err = a.Contains(ctx, "42")
	require.NoError(t, err)
	assert.False(t, ok)

	_, err = open().Set("a b")
	assert.ErrorIs(t, err, fleet.ErrBadConfig)
	_, err = open().Set("")
	assert.ErrorIs(t, err, fleet.ErrBadConfig)
	var nilFleet *fleet.Fleet
	_, err = nilFleet.Set("x")
	assert.ErrorIs(t, err, topgg.ErrNotConfigured)
}
