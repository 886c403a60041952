package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/topgg"
)

// TestReminders: choices set by any process, records only by the current
// leader (a stale token is ErrFenced, none is refused before any write) and
// only for a user still opted in; on again keeps the record; a second
// Reminders (another process starting) finds the table and the rows.
func TestReminders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pg.Pool(t)
	var a, b lease
	sa, err := pgstore.Open(ctx, pool, pgstore.Config{Fence: a.token})
	require.NoError(t, err)
	sb, err := pgstore.Open(ctx, pool, pgstore.Config{Fence: b.token})
	require.NoError(t, err)
	ra, err := sa.Reminders(ctx)
	require.NoError(t, err)
	rb, err := sb.Reminders(ctx)
	require.NoError(t, err)

	a.tok.Store(1)
	require.NoError(t, rb.SetReminder(ctx, "1", true), "a follower records an opt-in")
	require.NoError(t, ra.Reminded(ctx, "1", "1@k"))
	require.ErrorIs(t, rb.Reminded(ctx, "1", "1@b"), pgstore.ErrFenced, "not leading")
	require.NoError(t, ra.Reminded(ctx, "2", "2@k"), "not opted in: nothing recorded")
	require.NoError(t, rb.SetReminder(ctx, "1", true))
	check := func(user string, wantOn bool, wantLast string) {
		t.Helper()
		on, last, err := rb.Reminder(ctx, user)
		require.NoError(t, err)
		assert.Equal(t, wantOn, on, user)
		assert.Equal(t, wantLast, last, user)
	}
	check("1", true, "1@k")
	check("2", false, "")

	b.tok.Store(2) // b leads now: a's token is stale
	require.NoError(t, rb.Reminded(ctx, "1", "1@new"))
	require.ErrorIs(t, ra.Reminded(ctx, "1", "1@stale"), pgstore.ErrFenced)
	check("1", true, "1@new")
	require.NoError(t, ra.SetReminder(ctx, "1", false))
	check("1", false, "")

	var zero pgstore.Reminders
	assert.ErrorIs(t, zero.SetReminder(ctx, "1", true), topgg.ErrNotConfigured)
	_, err = (&pgstore.Store{}).Reminders(ctx)
	assert.ErrorIs(t, err, topgg.ErrNotConfigured)
}

// TestOpenReminders: OpenReminders, what the plugin asks of a vote store,
// gives the same opt-ins as Reminders (the table made on first use), and a
// Store not made by Open is an error.
func TestOpenReminders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := pgstore.Open(ctx, pg.Pool(t), pgstore.Config{Schema: "open_reminders"})
	require.NoError(t, err)
	rs, err := s.OpenReminders(ctx)
	require.NoError(t, err)
	require.NoError(t, rs.SetReminder(ctx, "1", true))
	direct, err := s.Reminders(ctx)
	require.NoError(t, err)
	on, _, err := direct.Reminder(ctx, "1")
	require.NoError(t, err)
	assert.True(t, on, "OpenReminders keeps the opt-ins elsewhere than Reminders")

	_, err = (&pgstore.Store{}).OpenReminders(ctx)
	assert.ErrorIs(t, err, topgg.ErrNotConfigured)
}
