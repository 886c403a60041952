package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestReminders: choices set by any process, records only by the current
// leader (a stale token is ErrFenced, none is refused before any write) and
// only for a user still opted in; on again keeps the record; another
// process starting finds the rows.
func TestReminders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pg.Pool(t)
	var a, b lease
	sa, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	sb, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	fenced(t, sa, a.token)
	fenced(t, sb, b.token)

	a.tok.Store(1)
	require.NoError(t, sb.SetReminder(ctx, "1", true), "a follower records an opt-in")
	require.NoError(t, sa.Reminded(ctx, "1", "1@k"))
	require.ErrorIs(t, sb.Reminded(ctx, "1", "1@b"), pgstore.ErrFenced, "not leading")
	require.NoError(t, sa.Reminded(ctx, "2", "2@k"), "not opted in: nothing recorded")
	require.NoError(t, sb.SetReminder(ctx, "1", true))
	check := func(s voterewards.ReminderStore, user string, wantOn bool, wantLast string) {
		t.Helper()
		on, last, err := s.Reminder(ctx, user)
		require.NoError(t, err)
		assert.Equal(t, wantOn, on, user)
		assert.Equal(t, wantLast, last, user)
	}
	check(sb, "1", true, "1@k")
	check(sb, "2", false, "")

	b.tok.Store(2) // b leads now: a's token is stale
	require.NoError(t, sb.Reminded(ctx, "1", "1@new"))
	require.ErrorIs(t, sa.Reminded(ctx, "1", "1@stale"), pgstore.ErrFenced)
	check(sb, "1", true, "1@new")
	sc, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	check(sc, "1", true, "1@new")
	require.NoError(t, sa.SetReminder(ctx, "1", false))
	check(sc, "1", false, "")
}

// TestRemindersAreTheSchemas: the opt-ins set through the State the plugin
// holds are the schema's: another Store on the same schema reads them, one
// on another schema does not.
func TestRemindersAreTheSchemas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pg.Pool(t)
	var st voterewards.State
	st, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: "open_reminders"})
	require.NoError(t, err)
	require.NoError(t, st.SetReminder(ctx, "1", true))
	same, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: "open_reminders"})
	require.NoError(t, err)
	on, _, err := same.Reminder(ctx, "1")
	require.NoError(t, err)
	assert.True(t, on, "the opt-in is not in the schema's table")
	other, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: "other_reminders"})
	require.NoError(t, err)
	on, _, err = other.Reminder(ctx, "1")
	require.NoError(t, err)
	assert.False(t, on, "another schema's store holds the opt-in")
}
