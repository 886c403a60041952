package plugin_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/pgtest"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterperks"
)

// TestPostgresVoteStoreKeepsTheReminderOptIns: with a PostgreSQL vote store
// and reminders on, the opt-ins live in that database, beside the votes
// (the "whichever backend is in use"), not in the state directory's
// file; New itself touches no database (the table is made on first use).
func TestPostgresVoteStoreKeepsTheReminderOptIns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := pgtest.Start(t)
	store, err := pgstore.Open(ctx, pg.Pool(t), pgstore.Config{})
	require.NoError(t, err)
	w := newWorld(t, worldSpec{})
	cfg := w.config()
	p, err := plugin.New(w.client, cfg, plugin.WithLogger(slog.New(slog.DiscardHandler)), plugin.WithVoteStore(store),
		plugin.WithVoterPerks(plugin.VoterPerks{BotID: "1100000000000000001", Reminders: true}))
	require.NoError(t, err)

	const user = "300000000000000042"
	require.NoError(t, p.Perks().SetReminder(ctx, user, true))
	r, err := store.Reminders(ctx)
	require.NoError(t, err)
	on, _, err := r.Reminder(ctx, user)
	require.NoError(t, err)
	assert.True(t, on, "the opt-in is not in PostgreSQL")
	_, err = os.Stat(filepath.Join(cfg.StateDir, voterperks.RemindersFile))
	assert.ErrorIs(t, err, os.ErrNotExist, "the opt-in went to the state directory's file")
}
