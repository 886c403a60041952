package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// useVote runs /vote as user, with remind when given, and returns the reply.
func (e *e2e) useVote(ctx context.Context, user string, remind *bool) string {
	e.t.Helper()
	spec := discordtest.InteractionSpec{Command: "vote", GuildID: guild(0, 0), UserID: user}
	if remind != nil {
		spec.Options = []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: "remind", Type: discordgo.ApplicationCommandOptionBoolean, Value: *remind},
		}
	}
	id, _, err := e.dc.Interact(ctx, spec)
	require.NoError(e.t, err)
	reply, err := e.dc.WaitInteractionReply(ctx, id)
	require.NoError(e.t, err)
	return reply.Content
}

// countUserMsg counts the log records with message msg about user.
func (p *proc) countUserMsg(msg, user string) int {
	n := 0
	for _, rec := range p.records() {
		if rec["msg"] == msg && rec["user"] == user {
			n++
		}
	}
	return n
}

// TestE2EReminderAtExpiry: users opt in with /vote remind:True; the opt-in
// survives a restart; each vote (delivered by webhook) is rewarded, and when
// it expires the voter gets one DM, no earlier than the expiry. A user who did
// not opt in gets none; one who voted again before the expiry keeps the role
// and gets none; one whose DMs are closed loses the role and the bot does not
// retry. A restart sends no reminder again.
func TestE2EReminderAtExpiry(t *testing.T) {
	e, hp := newWebhookE2E(t, false)
	ctx := e.ctx()
	const life = 8 * time.Second // room for the rewards on a loaded machine
	alice, bob, carol, dave := freshVote(11, life), freshVote(12, life), freshVote(13, life), freshVote(14, life)
	require.NoError(t, e.dc.BlockDMs(dave.PlatformID))

	bot := e.startHooked(hp)
	on, off := true, false
	for _, u := range []topggtest.Vote{alice, carol, dave} {
		assert.Contains(t, e.useVote(ctx, u.PlatformID, &on), "I will send you a direct message when you can vote again.")
	}
	assert.Contains(t, e.useVote(ctx, bob.PlatformID, &off), "I will not remind you to vote.")
	assert.NotContains(t, e.useVote(ctx, bob.PlatformID, nil), "remind", "no option, no reminder line")
	bot.terminate()

	// The opt-ins are read back after the restart.
	bot = e.startHooked(hp)
	now := time.Now().UTC()
	// carol voted 11.5 hours ago (the vote expires in a few seconds) and
	// votes again now, before it expires: she cannot vote yet, so no reminder.
	carolEarlier := carol
	carolEarlier.CreatedAt, carolEarlier.ExpiresAt = now.Add(-11*time.Hour-30*time.Minute), now.Add(life)
	carol.CreatedAt, carol.ExpiresAt = now, now.Add(12*time.Hour)
	alice.CreatedAt, alice.ExpiresAt = now, now.Add(life)
	bob.CreatedAt, bob.ExpiresAt = now, now.Add(life)
	dave.CreatedAt, dave.ExpiresAt = now, now.Add(life)
	start := time.Now()
	e.tg.AddVote(alice, bob, carolEarlier, carol, dave)
	require.Eventually(t, func() bool {
		added, _ := e.grants()
		return added[alice.PlatformID] == 1 && added[bob.PlatformID] == 1 && added[carol.PlatformID] == 2 && added[dave.PlatformID] == 1
	}, wait, tick)
	t.Logf("5 webhook votes rewarded in %v", time.Since(start))
	require.True(t, time.Now().Before(alice.ExpiresAt), "the votes were rewarded after they expired: the test proves nothing")

	dms, err := e.dc.WaitDirectMessages(ctx, alice.PlatformID, 1)
	require.NoError(t, err)
	assert.False(t, time.Now().Before(alice.ExpiresAt), "reminded before the vote expired")
	require.Len(t, dms, 1)
	assert.Contains(t, dms[0].Content, "you can vote again now! https://top.gg/bot/"+e.dc.ApplicationID()+"/vote")
	require.Eventually(t, func() bool {
		return bot.countUserMsg("vote expired: role taken back", bob.PlatformID) == 1 &&
			bot.countUserMsg("could not send the vote reminder: Discord refused the direct message", dave.PlatformID) == 1 &&
			bot.countUserMsg("vote expired but the user voted again; role kept, no reminder", carol.PlatformID) == 1
	}, wait, tick)
	assert.Empty(t, e.dc.MemberRoles(guild(0, 0), alice.PlatformID))
	assert.Empty(t, e.dc.MemberRoles(guild(0, 0), dave.PlatformID))
	assert.Equal(t, []string{rewardRole}, e.dc.MemberRoles(guild(0, 0), carol.PlatformID), "carol voted again: she keeps the role")
	bot.terminate()

	// A restart re-reads the history: no expiry, and no reminder, comes again.
	again := e.startHooked(hp)
	e.waitPolls(3)
	again.terminate()
	for _, dm := range e.dc.DirectMessages() {
		assert.Equal(t, alice.PlatformID, dm.UserID, "only alice gets a reminder")
	}
	assert.Len(t, e.dc.DirectMessages(), 1, "a reminder was sent again")
	_, removed := e.grants()
	assert.Equal(t, map[string]int{alice.PlatformID: 1, bob.PlatformID: 1, dave.PlatformID: 1}, removed)
	assert.Equal(t, 1, strings.Count(bot.stderr.String()+again.stderr.String(), `"msg":"vote reminder sent"`))
}
