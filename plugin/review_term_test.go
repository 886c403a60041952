package plugin_test

// Findings of the hostile review (review-attack): each test fails on the
// code it names and is skipped until its owner fixes it.

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/pgtest"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestReviewFleetWithUnfencedPostgresStore: a PostgreSQL store opened
// without Config.Fence, given to a plugin in a fleet, lets a stale leader's
// writes (checkpoint, delivery records) through unfenced, silently. The
// misuse must be an error from New (the store could say whether it is
// fenced, e.g. a Fenced() bool the plugin asks through an interface).
func TestReviewFleetWithUnfencedPostgresStore(t *testing.T) {
	pg := pgtest.Start(t)
	rds := redistest.Start(t)
	f, err := fleet.Open(rds.URL(), fleet.Config{Bot: "app1", ShardCount: 1, LeaseTTL: time.Second, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	store, err := pgstore.Open(context.Background(), pg.Pool(t), pgstore.Config{}) // no Fence
	require.NoError(t, err)
	w := newWorld(t, worldSpec{})
	_, err = plugin.New(w.client, w.config(), plugin.WithFleet(f), plugin.WithVoteStore(store),
		plugin.WithRewardHandler(store.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { return nil })))
	require.Error(t, err, "a fleet on a PostgreSQL store with no fence")
}
