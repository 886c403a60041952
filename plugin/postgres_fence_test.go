package plugin_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/pgtest"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestPostgresStateChecks: New fences a PostgreSQL state given to a fleet
// by the fleet's lease (its leader writes are refused while this process
// does not lead), and leaves it unfenced in one process; the readiness
// checks ping the state ("state"), failing once its database cannot be
// reached.
func TestPostgresStateChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := pgtest.Start(t)
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

// TestPostgresLeaderPausedPastTheLeaseHoldsNoLockForTxTimeout: a fleet's
// lease (1 s) is shorter than the store's TxTimeout (the 15 s default), so a
// leader paused in a transaction would hold its votes' locks for TxTimeout,
// long after the next leader took over. Every transaction of the leader is
// limited (idle in transaction, lock waits) to what is left of its term.
func TestPostgresLeaderPausedPastTheLeaseHoldsNoLockForTxTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = time.Second
	pg := pgtest.Start(t)
	w := newWorld(t, worldSpec{})
	f, _ := newFleet(t, redistest.Start(t).URL(), fleet.Config{Bot: "app1", ShardCount: 1, LeaseTTL: lease, Logger: slog.New(slog.DiscardHandler)})
	store, err := pgstore.Open(ctx, pg.Pool(t), pgstore.Config{})
	require.NoError(t, err)
	limits := make(chan [2]time.Duration, 8)
	reward := store.Reward(func(ctx context.Context, tx pgx.Tx, _ voterewards.Vote) error {
		var idle, lock time.Duration
		err := tx.QueryRow(ctx, `SELECT current_setting('idle_in_transaction_session_timeout')::interval,
			current_setting('lock_timeout')::interval`).Scan(&idle, &lock)
		if err == nil {
			limits <- [2]time.Duration{idle, lock}
		}
		return err
	})
	w.tg.AddVote(votes(3)...)
	w.start(w.plugin(w.config(), plugin.WithFleet(f), plugin.WithState(store), plugin.WithRewardHandler(reward)))
	w.open()
	for range 3 {
		select {
		case l := <-limits:
			assert.Positive(t, l[0])
			assert.LessOrEqual(t, l[0], lease, "idle_in_transaction_session_timeout outlasts the lease")
			assert.LessOrEqual(t, l[1], lease, "lock_timeout outlasts the lease")
		case <-time.After(wait):
			t.Fatal("the votes were not rewarded")
		}
	}
}
