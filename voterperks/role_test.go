package voterperks_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// loggedPerks returns perks with the voter role in guild, reminders on, that
// log to the returned buffer (debug and up).
func loggedPerks(t *testing.T, w *world, guild string) (*voterperks.Perks, *testlog.Buffer) {
	t.Helper()
	store := voterewards.NewMemoryStore()
	poller, err := voterewards.New(w.client, voterewards.Config{
		OnReward: func(context.Context, voterewards.Vote) error { return nil }, Store: store,
	})
	require.NoError(t, err)
	var buf testlog.Buffer
	perks, err := voterperks.New(poller, voterperks.Config{
		BotID: w.dc.ApplicationID(), Session: func() *discordgo.Session { return w.sessions[0] },
		State: store, Role: &voterperks.Role{GuildID: guild, RoleID: voterRole}, Reminders: true, Logger: buf.Logger(),
	})
	require.NoError(t, err)
	return perks, &buf
}

// lines returns the log lines of buf at level (INFO, WARN, ...).
func lines(buf *testlog.Buffer, level slog.Level) []string {
	var out []string
	for l := range strings.Lines(buf.String()) {
		if strings.Contains(l, "level="+level.String()+" ") {
			out = append(out, l)
		}
	}
	return out
}

// TestOneInfoLinePerVote: a vote's whole life (the role given, then taken
// back and the reminder sent at expiry) logs one INFO line; the rest is DEBUG.
func TestOneInfoLinePerVote(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	perks, buf := loggedPerks(t, w, w.guilds[0])
	ctx := w.ctx()
	v := expiredVote(1)
	require.NoError(t, perks.SetReminder(ctx, v.PlatformID, true))
	before := len(lines(buf, slog.LevelInfo))
	v.ExpiresAt = time.Now().Add(time.Hour)
	require.NoError(t, perks.OnReward(ctx, v))
	require.NoError(t, perks.OnExpire(ctx, expiredVote(1)))
	require.Len(t, w.dmsTo(v.PlatformID), 1, "the reminder was sent")
	_, removed := w.roleChanges()
	require.Equal(t, 1, removed[v.PlatformID], "the role was taken back")
	assert.Len(t, lines(buf, slog.LevelInfo)[before:], 1, "%s", buf.String())
	assert.Contains(t, buf.String(), "level=DEBUG msg=\"vote reminder sent\"")
}

// TestRoleGuildTheBotIsNotInWarnsOnce: a voter role in a guild the bot is
// not in (Discord: 404 Unknown Guild) is one WARN naming the guild and the
// fix, however many votes come, and no INFO line per vote.
func TestRoleGuildTheBotIsNotInWarnsOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	const elsewhere = "900000000000000999"
	perks, buf := loggedPerks(t, w, elsewhere)
	ctx := w.ctx()
	for n := range 3 {
		v := expiredVote(n)
		v.ExpiresAt = time.Now().Add(time.Hour)
		require.NoError(t, perks.OnReward(ctx, v), "a 404 is not retried")
	}
	warns := lines(buf, slog.LevelWarn)
	require.Len(t, warns, 1, "%s", buf.String())
	assert.Contains(t, warns[0], elsewhere)
	assert.Contains(t, warns[0], "invited")
	assert.Empty(t, lines(buf, slog.LevelInfo))
	assert.Empty(t, w.dc.RoleChanges())
}

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
