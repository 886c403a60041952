package plugin_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/plugin"
)

// TestPostgresStateKeepsTheReminderOptIns: with a PostgreSQL state and
// reminders on, the opt-ins live in that database, beside the votes (the
// issue's "whichever backend is in use").
func TestPostgresStateKeepsTheReminderOptIns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := pgstoretest.Start(t)
	store, err := pgstore.Open(ctx, pg.Pool(t), pgstore.Config{})
	require.NoError(t, err)
	w := newWorld(t, worldSpec{})
	p, err := plugin.New(w.client, w.config(), plugin.WithLogger(slog.New(slog.DiscardHandler)), plugin.WithState(store),
		plugin.WithVoterPerks(plugin.VoterPerks{BotID: "1100000000000000001", Reminders: true}))
	require.NoError(t, err)

	const user = "300000000000000042"
	require.NoError(t, p.Perks().SetReminder(ctx, user, true))
	on, _, err := store.Reminder(ctx, user)
	require.NoError(t, err)
	assert.True(t, on, "the opt-in is not in PostgreSQL")
}
