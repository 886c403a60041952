package voterperks_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestOneProcess runs the perks in one process through the plugin, real
// discordgo sessions against the fake Discord and a real client against the
// fake Top.gg. Users opt in with /vote remind:True; the opt-ins survive a
// restart (the state directory's file, closed and opened again). Each vote
// gives the voter role; each expiry takes it back and sends one reminder to
// those who opted in, no earlier than the expiry and saying how to stop
// them, once even though the expiry is delivered twice (a handler after the
// perks' fails once). A user who did not opt in gets none; one who voted
// again before the expiry keeps the role and gets none; one whose DMs are
// closed loses the role and is not retried. /premium, gated, answers a user
// without a vote with the vote link (ephemeral) and runs for a voter; /vote
// and /leaderboard answer from the cache and the ledger.
//
// gocyclo: one scenario told in order.
func TestOneProcess(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	dir := t.TempDir()
	state := openState(t, dir)
	cfg := w.config()
	const life = 3 * time.Second
	now := time.Now().UTC()
	alice, bob, carol, dave, frank := vote(1, now, life), vote(2, now, life), vote(3, now, 12*time.Hour), vote(4, now, life), vote(6, now, 12*time.Hour)
	const erin = "310000000000000005"
	require.NoError(t, w.dc.BlockDMs(dave.PlatformID))

	bot := w.bot(cfg, []int{0}, plugin.WithState(state))
	w.start(bot)
	require.NoError(t, w.sessions[0].Open())
	on, off := true, false
	for _, u := range []topggtest.Vote{alice, carol, dave} {
		assert.Contains(t, w.interact(0, "vote", u.PlatformID, &on).Content, "I will send you a direct message when you can vote again.")
	}
	assert.Contains(t, w.interact(0, "vote", bob.PlatformID, &off).Content, "I will not remind you to vote.")
	require.NoError(t, w.stop(bot))
	require.NoError(t, state.Close())
	w.newSession(0)

	// The opt-ins are read back after the restart.
	state = openState(t, dir)
	var expired testkit.Counter // calls per user
	var failedOnce atomic.Bool
	bot = w.bot(cfg, []int{0}, plugin.WithState(state), plugin.WithExpiryHandler(func(_ context.Context, v voterewards.Vote) error {
		if expired.Add(v.PlatformID) == 1 && v.PlatformID == alice.PlatformID {
			failedOnce.Store(true)
			return errors.New("the bot's own expiry work failed once")
		}
		return nil
	}))
	w.start(bot)
	require.NoError(t, w.sessions[0].Open())
	require.Eventually(t, func() bool { return bot.Active(erin).Covered }, wait, tick, "the history was never read")
	gate := w.interact(0, premiumName, erin, nil)
	assert.Equal(t, discordgo.MessageFlagsEphemeral, gate.Flags)
	assert.Contains(t, gate.Content, "https://top.gg/bot/"+w.dc.ApplicationID()+"/vote")
	assert.Contains(t, gate.Content, "you can vote now")

	// carol voted 11.5 hours ago (that vote expires in a few seconds) and
	// votes again now: she cannot vote yet, so she keeps the role and gets
	// no reminder.
	carolEarlier := carol
	carolEarlier.CreatedAt, carolEarlier.ExpiresAt = now.Add(-11*time.Hour-30*time.Minute), now.Add(life)
	w.tg.AddVote(alice, bob, carolEarlier, carol, dave, frank)
	require.Eventually(t, func() bool {
		added, _ := w.roleChanges()
		return added[alice.PlatformID] == 1 && added[bob.PlatformID] == 1 && added[carol.PlatformID] == 2 &&
			added[dave.PlatformID] == 1 && added[frank.PlatformID] == 1
	}, wait, tick, "the votes were not all rewarded with the role")

	assert.Equal(t, premiumText, w.interact(0, premiumName, frank.PlatformID, nil).Content, "a voter is let through the gate")
	reply := w.interact(0, "vote", frank.PlatformID, nil)
	assert.Contains(t, reply.Content, "Your vote is active until")
	assert.Contains(t, reply.Content, "Streak: 1")
	board := w.interact(0, "leaderboard", erin, nil).Content
	for _, u := range []topggtest.Vote{alice, bob, carol, dave, frank} {
		assert.Contains(t, board, "<@"+u.PlatformID+">")
	}
	assert.Contains(t, board, "<@"+carol.PlatformID+">: 2 votes")
	assert.NotContains(t, board, erin)

	dms, err := w.dc.WaitDirectMessages(w.ctx(), alice.PlatformID, 1)
	require.NoError(t, err)
	assert.False(t, time.Now().Before(alice.ExpiresAt), "reminded before the vote expired")
	assert.Contains(t, dms[0].Content, "you can vote again now! https://top.gg/bot/"+w.dc.ApplicationID()+"/vote")
	assert.Contains(t, dms[0].Content, "To stop these reminders, use /vote remind:False.")
	require.Eventually(t, func() bool {
		return expired.Get(alice.PlatformID) == 2 && expired.Get(bob.PlatformID) == 1 &&
			expired.Get(carol.PlatformID) == 1 && expired.Get(dave.PlatformID) == 1
	}, wait, tick, "the expiries were not all handled")
	assert.True(t, failedOnce.Load())
	assert.Len(t, w.dmsTo(alice.PlatformID), 1, "the redelivered expiry reminded again")
	assert.Empty(t, w.dmsTo(bob.PlatformID), "bob did not opt in")
	assert.Empty(t, w.dmsTo(carol.PlatformID), "carol voted again")
	assert.Empty(t, w.dmsTo(dave.PlatformID), "dave's DMs are closed")
	guild := w.guilds[0]
	assert.Empty(t, w.dc.MemberRoles(guild, alice.PlatformID))
	assert.Empty(t, w.dc.MemberRoles(guild, bob.PlatformID))
	assert.Empty(t, w.dc.MemberRoles(guild, dave.PlatformID))
	assert.Equal(t, []string{voterRole}, w.dc.MemberRoles(guild, carol.PlatformID), "carol voted again: she keeps the role")
	assert.Equal(t, []string{voterRole}, w.dc.MemberRoles(guild, frank.PlatformID))
}

// openState opens the bot's state in dir, closed at the end of the test
// (after the bots started later stopped).
func openState(t *testing.T, dir string) *boltstate.State {
	t.Helper()
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() }) // a second Close, after the test's own, does nothing
	return s
}

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
