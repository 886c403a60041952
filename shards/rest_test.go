package shards_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/shards"
)

const (
	user = "1300000000000000001"
	role = "1300000000000000777"
)

// roleAdd grants the role in the world's first guild under ctx, as a reward
// handler does.
func (w *world) roleAdd(ctx context.Context) error {
	guild := w.srv.GuildIDs()[0]
	s, err := w.group.ForGuild(guild)
	if err != nil {
		return err
	}
	return s.GuildMemberRoleAdd(guild, user, role, discordgo.WithContext(ctx))
}

// roleCalls counts the role grants the fake Discord received.
func (w *world) roleCalls() int {
	n := 0
	for _, c := range w.srv.Calls() {
		if c.Method == http.MethodPut && c.Status != 0 {
			n++
		}
	}
	return n
}

// TestRateLimitedRoleCallEndsWithContext: Discord answers a role grant 429
// with a minute's Retry-After; cancelling the caller's context ends the wait
// at once (discordgo alone sleeps the minute through).
func TestRateLimitedRoleCallEndsWithContext(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	require.NoError(t, w.srv.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", RetryAfter: time.Minute}))
	ctx, cancel := context.WithCancel(context.Background())
	done := async(func() error { return w.roleAdd(ctx) })
	require.Eventually(t, func() bool { return w.clock.Timers() > 0 }, quick, time.Millisecond, "no wait began")
	cancel()
	err := within(t, done, "the rate-limited role grant")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, w.roleCalls(), "sent again after the cancel")
	assert.Empty(t, w.srv.MemberRoles(w.srv.GuildIDs()[0], user))
}

// TestRateLimitedRoleCallWaitsItOut: the 429's Retry-After is waited out
// (on the clock, not less) and the grant then goes through; a second grant
// after the limit waits for nothing.
func TestRateLimitedRoleCallWaitsItOut(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	require.NoError(t, w.srv.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", RetryAfter: 30 * time.Second}))
	done := async(func() error { return w.roleAdd(w.ctx()) })
	require.Eventually(t, func() bool { return w.clock.Timers() > 0 }, quick, time.Millisecond, "no wait began")
	w.clock.Advance(29 * time.Second)
	assert.Never(t, func() bool { return w.roleCalls() > 1 }, 50*time.Millisecond, 5*time.Millisecond, "sent before Retry-After")
	w.clock.Advance(time.Second)
	require.NoError(t, within(t, done, "the grant after the wait"))
	assert.Equal(t, []string{role}, w.srv.MemberRoles(w.srv.GuildIDs()[0], user))
	assert.Equal(t, 2, w.roleCalls())

	require.NoError(t, w.roleAdd(w.ctx()))
	assert.Equal(t, 3, w.roleCalls())
}

// TestGlobalRateLimitHoldsEveryRoute: a global 429 on one route holds a call
// on another route until it is over, and that wait ends with its context.
func TestGlobalRateLimitHoldsEveryRoute(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	require.NoError(t, w.srv.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", RetryAfter: time.Minute,
		Header: map[string]string{"X-RateLimit-Global": "true"}}))
	grant := async(func() error { return w.roleAdd(w.ctx()) })
	require.Eventually(t, func() bool { return w.clock.Timers() == 1 }, quick, time.Millisecond)

	s := w.group.Sessions()[0]
	ctx, cancel := context.WithCancel(context.Background())
	me := async(func() error { _, err := s.User("@me", discordgo.WithContext(ctx)); return err })
	require.Eventually(t, func() bool { return w.clock.Timers() == 2 }, quick, time.Millisecond, "the other route did not wait")
	cancel()
	require.ErrorIs(t, within(t, me, "the held call"), context.Canceled)
	for _, c := range w.srv.Calls() {
		assert.NotEqual(t, "/api/v9/users/@me", c.Path, "sent during a global limit")
	}
	w.clock.Advance(time.Minute)
	require.NoError(t, within(t, grant, "the grant"))
}

// TestRateLimitGivesUp: a route that answers 429 every time fails with a
// ErrRateLimited after a bounded number of attempts, never a discordgo sleep.
func TestRateLimitGivesUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	require.NoError(t, w.srv.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", RetryAfter: time.Second, Times: 100}))
	done := async(func() error { return w.roleAdd(w.ctx()) })
	for i := 1; i < 5; i++ {
		require.Eventually(t, func() bool { return w.roleCalls() == i && w.clock.Timers() > 0 }, quick, time.Millisecond)
		w.clock.Advance(time.Second)
	}
	err := within(t, done, "the grant")
	require.ErrorIs(t, err, shards.ErrRateLimited)
	assert.Contains(t, err.Error(), "PUT /api/v9/guilds/"+w.srv.GuildIDs()[0]+"/members/:id/roles/:id: rate-limited by Discord (route limit, retry after 1s) after 5 attempts")
	assert.Equal(t, 5, w.roleCalls())
}

// TestEndlessBodyIsCut: an answer that never ends fails the call with a
// ErrBodyTooLarge once the bound is read, instead of growing the process.
func TestEndlessBodyIsCut(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	w := newWorld(t, 1, shards.WithMaxBodySize(limit))
	require.NoError(t, w.srv.Inject(discordtest.Fault{Method: "GET", Path: "/users/@me", Body: "{", Endless: true}))
	s := w.group.Sessions()[0]
	done := async(func() error { _, err := s.User("@me", discordgo.WithContext(w.ctx())); return err })
	err := within(t, done, "the call with an endless body")
	require.ErrorIs(t, err, shards.ErrBodyTooLarge)
	assert.Contains(t, err.Error(), "GET /api/v9/users/@me: response body too large (over 1048576 bytes)")

	// The next call is answered normally.
	me, err := s.User("@me", discordgo.WithContext(w.ctx()))
	require.NoError(t, err)
	assert.Equal(t, w.srv.BotUserID(), me.ID)
}

// TestLongBodyUnderTheBound: a long answer within the bound is read whole
// (the fake's long body is not JSON, so decoding fails, but not the read).
func TestLongBodyUnderTheBound(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1, shards.WithMaxBodySize(1<<20))
	require.NoError(t, w.srv.Inject(discordtest.Fault{Method: "GET", Path: "/users/@me", Status: http.StatusOK, Body: "{" + strings.Repeat(" ", 1<<20-1)}))
	_, err := w.group.Sessions()[0].User("@me", discordgo.WithContext(w.ctx()))
	require.Error(t, err)
	assert.NotErrorIs(t, err, shards.ErrBodyTooLarge)
}
