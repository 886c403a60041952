package voterperks_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
)

// TestPostgreSQL runs the perks of a bot whose state is in PostgreSQL (a
// real server): the opt-in is kept beside the votes, /vote and /leaderboard
// read its ledger, and the expiry takes the role back and sends one reminder.
func TestPostgreSQL(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := pgstore.Open(ctx, pg.Pool(t), pgstore.Config{})
	require.NoError(t, err)
	w := newWorld(t, 1)
	bot := w.bot(w.config(), []int{0}, plugin.WithState(store))
	w.start(bot)
	require.NoError(t, w.sessions[0].Open())

	now := time.Now().UTC()
	alice := vote(1, now, 3*time.Second)
	on := true
	assert.Contains(t, w.interact(0, "vote", alice.PlatformID, &on).Content, "I will send you a direct message")
	got, _, err := store.Reminder(ctx, alice.PlatformID)
	require.NoError(t, err)
	require.True(t, got, "the opt-in is not in PostgreSQL")
	w.tg.AddVote(alice)
	require.Eventually(t, func() bool { return len(w.dc.MemberRoles(w.guilds[0], alice.PlatformID)) == 1 }, wait, tick)
	assert.Contains(t, w.interact(0, "vote", alice.PlatformID, nil).Content, "Streak: 1 · votes this month: 1 · all time: 1")
	assert.Contains(t, w.interact(0, "leaderboard", alice.PlatformID, nil).Content, "1. <@"+alice.PlatformID+">: 1 vote")

	dms, err := w.dc.WaitDirectMessages(w.ctx(), alice.PlatformID, 1)
	require.NoError(t, err)
	assert.Contains(t, dms[0].Content, "To stop these reminders")
	require.Eventually(t, func() bool {
		_, last, err := store.Reminder(ctx, alice.PlatformID)
		return err == nil && last != ""
	}, wait, tick, "the reminder was never recorded")
	assert.Empty(t, w.dc.MemberRoles(w.guilds[0], alice.PlatformID))
	assert.Len(t, w.dmsTo(alice.PlatformID), 1)
}
