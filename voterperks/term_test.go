package voterperks_test

import (
	"context"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// alwaysActive is a Votes whose every user has an active vote.
type alwaysActive struct{}

func (alwaysActive) Active(string) voterewards.Status { return voterewards.Status{Active: true} }

// TestRoleRetryOfAnEndedTermIsNotSent: the term is checked once,
// before discordgo's call; discordgo then waits out a 429 (and retries
// 5xx) by itself and sends the request again, unchecked. A leader paused
// during that wait past its term (its context not cancelled yet: the
// lease's goroutine has not run) still gave the role: a stale leader's
// Discord write. The calls pass discordgo.WithRetryOnRatelimit(false) and
// WithRestRetries(0) (leaderCall): the 429 is the call's error, and the
// pipeline's retry checks the term first.
func TestRoleRetryOfAnEndedTermIsNotSent(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	p, err := voterperks.New(alwaysActive{}, voterperks.Config{
		BotID: w.dc.ApplicationID(), Session: func() *discordgo.Session { return w.sessions[0] },
		State: voterewards.NewMemoryStore(), Role: &voterperks.Role{GuildID: w.guilds[0], RoleID: voterRole}, Logger: testLogger(),
	})
	require.NoError(t, err)
	require.NoError(t, w.dc.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", RetryAfter: 300 * time.Millisecond}))

	start := time.Unix(1_700_000_000, 0)
	clk := clock.NewFake(start)
	ctx := clock.WithTerm(context.Background(), clock.NewTerm(clk, start.Add(time.Second), nil))
	go func() {
		// The 429 arrived: the leader pauses past its term during the wait.
		for deadline := time.Now().Add(wait); w.dc.PendingFaults() > 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond) // a bounded poll: discordtest has no event for a fault played
		}
		clk.Advance(time.Hour)
	}()
	now := time.Now().UTC()
	tv := topgg.Vote{UserID: "810000000000000001", PlatformID: "310000000000000001", Weight: 1, CreatedAt: now, ExpiresAt: now.Add(12 * time.Hour)}
	v := voterewards.Vote{Vote: tv, Origin: voterewards.OriginWebhook}
	err = p.OnReward(ctx, v)
	require.Error(t, err, "the 429 goes back to the pipeline, not waited out and resent by discordgo")
	require.Eventually(t, func() bool { return clock.CheckTerm(ctx) != nil }, wait, time.Millisecond)
	assert.ErrorIs(t, p.OnReward(ctx, v), clock.ErrTermOver, "the pipeline's retry checks the term first")
	added, _ := w.roleChanges()
	assert.Zero(t, added[tv.PlatformID], "the role was given after the term's deadline")
}
