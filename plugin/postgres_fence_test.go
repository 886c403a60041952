package plugin_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/pgtest"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
)

// TestPostgresStoreChecks: New refuses a fleet given a PostgreSQL store
// without a fence (naming the fix), accepts one fenced by FleetFence, and
// accepts an unfenced store in one process; the readiness checks ping the
// store ("vote_store"), failing once its database cannot be reached.
func TestPostgresStoreChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := pgtest.Start(t)
	w := newWorld(t, worldSpec{})
	quiet := plugin.WithLogger(slog.New(slog.DiscardHandler))
	f, err := fleet.Open(redistest.Start(t).URL(), fleet.Config{Bot: "app1", ShardCount: 1, LeaseTTL: time.Second, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.Close()) })

	pool := pg.Pool(t)
	unfenced, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	_, err = plugin.New(w.client, w.config(), quiet, plugin.WithVoteStore(unfenced), plugin.WithFleet(f))
	require.ErrorIs(t, err, topgg.ErrNotConfigured, "a fleet on an unfenced PostgreSQL store")
	assert.Contains(t, err.Error(), "pgstore.Config{Fence: plugin.FleetFence(f)}", "the error names the fix")

	fenced, err := pgstore.Open(ctx, pool, pgstore.Config{Fence: plugin.FleetFence(f)})
	require.NoError(t, err)
	_, err = plugin.New(w.client, w.config(), quiet, plugin.WithFleet(f), plugin.WithVoteStore(fenced))
	require.NoError(t, err, "a fleet on a store fenced by its lease")

	p, err := plugin.New(w.client, w.config(), quiet, plugin.WithVoteStore(unfenced))
	require.NoError(t, err, "one process needs no fence")
	var check func(context.Context) error
	for _, c := range p.ReadinessChecks() {
		if c.Name == "vote_store" {
			check = c.Func
		}
	}
	require.NotNil(t, check, "no vote_store readiness check for a PostgreSQL store")
	assert.NoError(t, check(ctx))
	pool.Close()
	assert.Error(t, check(ctx), "the store's database cannot be reached: not ready")
}
