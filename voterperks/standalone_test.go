package voterperks_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// failOnce is a state whose first Reminded fails after nothing was
// written: a leader that died between the direct message and its record.
type failOnce struct {
	voterewards.State
	failed bool
}

func (f *failOnce) Reminded(ctx context.Context, user, key string) error {
	if !f.failed {
		f.failed = true
		return errors.New("the process died before recording the reminder")
	}
	return f.State.Reminded(ctx, user, key)
}

// standalone returns perks over a real poller (not run: no vote is active)
// and a session of w's fake Discord, with reminders kept in store (off if nil).
func standalone(t *testing.T, w *world, store voterewards.State, s *discordgo.Session) *voterperks.Perks {
	t.Helper()
	reminders := store != nil
	if !reminders {
		store = voterewards.NewMemoryStore()
	}
	poller, err := voterewards.New(w.client, voterewards.Config{
		OnReward: func(context.Context, voterewards.Vote) error { return nil }, Store: store,
	})
	require.NoError(t, err)
	perks, err := voterperks.New(poller, voterperks.Config{
		BotID: w.dc.ApplicationID(), Session: func() *discordgo.Session { return s }, State: store,
		Role: &voterperks.Role{GuildID: w.guilds[0], RoleID: voterRole}, Reminders: reminders, Logger: testLogger(),
	})
	require.NoError(t, err)
	return perks
}

// expiredVote is a vote of user n that expired a moment ago.
func expiredVote(n int) voterewards.Vote {
	v := vote(n, time.Now().Add(-12*time.Hour-time.Second), 12*time.Hour)
	return voterewards.Vote{Vote: topgg.Vote{UserID: v.UserID, PlatformID: v.PlatformID, Weight: 1,
		CreatedAt: v.CreatedAt.UTC(), ExpiresAt: v.ExpiresAt.UTC()}, Origin: voterewards.OriginHistory}
}

// TestReminderOnceWhenTheRecordIsLost: the expiry handler sends the
// reminder, then fails to record it (the process died, or the store: an
// error wrapping voterewards.ErrStoreFailed); called again for the
// same vote, it sends it again with the same enforced nonce, and Discord
// shows one message. Once recorded, a third call sends nothing.
func TestReminderOnceWhenTheRecordIsLost(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	optIns := voterewards.NewMemoryStore()
	store := &failOnce{State: optIns}
	perks := standalone(t, w, store, w.sessions[0])
	ctx := w.ctx()
	v := expiredVote(1)
	require.NoError(t, perks.SetReminder(ctx, v.PlatformID, true))

	require.ErrorIs(t, perks.OnExpire(ctx, v), voterewards.ErrStoreFailed,
		"the lost record is the store's failure: voterewards starts no new call and delivers it again")
	require.NoError(t, perks.OnExpire(ctx, v))
	require.NoError(t, perks.OnExpire(ctx, v))
	assert.Len(t, w.dmsTo(v.PlatformID), 1)
	posts := 0
	for _, c := range w.dc.Calls() {
		if c.Method == http.MethodPost && strings.HasSuffix(c.Path, "/messages") {
			posts++
		}
	}
	assert.Equal(t, 2, posts, "the recorded reminder was sent again")
	on, last, err := optIns.Reminder(ctx, v.PlatformID)
	require.NoError(t, err)
	assert.True(t, on)
	assert.Equal(t, v.Key(), last)
}

// TestRoleCallHonoursCancellation: a role call Discord rate-limits for a
// minute, through a session of the shards package, ends when the handler's
// context does, and the handler returns its error (voterewards retries it
// later); nothing was changed.
func TestRoleCallHonoursCancellation(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	group, err := shards.New(w.dc.Token(), 1, shards.WithAPIBase(w.dc.APIBase()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = group.Close() })
	perks := standalone(t, w, nil, group.Sessions()[0])
	require.NoError(t, w.dc.Inject(discordtest.Fault{Method: http.MethodPut, Path: "/guilds/*", Status: http.StatusTooManyRequests,
		RetryAfter: time.Minute}))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	v := expiredVote(1)
	v.ExpiresAt = time.Now().Add(time.Hour) // still active
	start := time.Now()
	err = perks.OnReward(ctx, v)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), wait/2, "the rate-limit wait outlived the context")
	assert.Empty(t, w.dc.MemberRoles(w.guilds[0], v.PlatformID))
}

// TestRoleOutsideTheGuildIsSkipped: a voter Discord does not know in the
// guild (404) is skipped, not retried; a vote that expired before its
// reward ran gives no role.
func TestRoleOutsideTheGuildIsSkipped(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	perks := standalone(t, w, nil, w.sessions[0])
	ctx := w.ctx()
	require.NoError(t, w.dc.Inject(discordtest.Fault{Method: http.MethodPut, Path: "/guilds/*", Status: http.StatusNotFound}))
	v := expiredVote(1)
	v.ExpiresAt = time.Now().Add(time.Hour)
	require.NoError(t, perks.OnReward(ctx, v))
	assert.Empty(t, w.dc.RoleChanges())
	require.NoError(t, perks.OnReward(ctx, expiredVote(2)), "an expired vote")
	assert.Empty(t, w.dc.RoleChanges())
	require.NoError(t, perks.OnReward(ctx, v))
	assert.Equal(t, []string{voterRole}, w.dc.MemberRoles(w.guilds[0], v.PlatformID))
}

// TestLeaderPastItsTermActsNot: a handler whose context carries a fleet
// leader's term that is over (a process resumed after a pause past its
// lease) gives no role and sends no reminder: the next leader does.
func TestLeaderPastItsTermActsNot(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	optIns := voterewards.NewMemoryStore()
	perks := standalone(t, w, optIns, w.sessions[0])
	ctx := w.ctx()
	v := expiredVote(1)
	require.NoError(t, perks.SetReminder(ctx, v.PlatformID, true))
	over := clock.WithTerm(ctx, clock.NewTerm(nil, time.Now().Add(-time.Second), nil))
	assert.ErrorIs(t, perks.OnExpire(over, v), fleet.ErrTermOver)
	active := v
	active.ExpiresAt = time.Now().Add(time.Hour)
	assert.ErrorIs(t, perks.OnReward(over, active), fleet.ErrTermOver)
	assert.Empty(t, w.dc.RoleChanges())
	assert.Empty(t, w.dc.DirectMessages())
	on, last, err := optIns.Reminder(ctx, v.PlatformID)
	require.NoError(t, err)
	assert.True(t, on)
	assert.Empty(t, last, "nothing recorded")
}
