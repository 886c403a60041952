package plugin_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/plugin"
)

// TestPostgresStateChecks: New fences a PostgreSQL state given to a fleet
// by the fleet's lease (its leader writes are refused while this process
// does not lead), and leaves it unfenced in one process; the readiness
// checks ping the state ("state"), failing once its database cannot be
// reached.
func TestPostgresStateChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := pgstoretest.Start(t)
	w := newWorld(t, worldSpec{})
	quiet := plugin.WithLogger(slog.New(slog.DiscardHandler))
	f, _ := newFleet(t, redistest.Start(t).URL(), fleet.Config{Bot: "app1", ShardCount: 1, LeaseTTL: time.Second, Logger: slog.New(slog.DiscardHandler)})

	pool := pg.Pool(t)
	shared, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	_, err = plugin.New(w.client, w.config(), quiet, plugin.WithFleet(f), plugin.WithState(shared))
	require.NoError(t, err, "a fleet on a PostgreSQL state")
	assert.ErrorIs(t, shared.SaveHash(ctx, "h"), pgstore.ErrFenced, "a leader write of a process that never led")

	alone, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	p, err := plugin.New(w.client, w.config(), quiet, plugin.WithState(alone))
	require.NoError(t, err, "one process needs no fence")
	require.NoError(t, alone.SaveHash(ctx, "h"), "one process always leads")
	var check func(context.Context) error
	for _, c := range p.ReadinessChecks() {
		if c.Name == "state" {
			check = c.Func
		}
	}
	require.NotNil(t, check, "no state readiness check for a PostgreSQL state")
	assert.NoError(t, check(ctx))
	pool.Close()
	assert.Error(t, check(ctx), "the state's database cannot be reached: not ready")
}
