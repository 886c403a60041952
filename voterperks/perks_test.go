package voterperks_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/shards"
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

// TestRoleRefusedWarnsOnceNamingTheFix: a role call Discord refuses (403
// Missing Permissions: no Manage Roles, or the voter role above the bot's)
// fails every vote until the owner fixes it; it is still returned, for
// voterewards to retry, and is one WARN naming the fix, however many votes come.
func TestRoleRefusedWarnsOnceNamingTheFix(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	perks, buf := loggedPerks(t, w, w.guilds[0])
	require.NoError(t, w.dc.Inject(discordtest.Fault{Method: http.MethodPut, Path: "/guilds/*", Status: http.StatusForbidden, Times: 3,
		Body: `{"message": "Missing Permissions", "code": 50013}`}))
	for n := range 3 {
		v := expiredVote(n)
		v.ExpiresAt = time.Now().Add(time.Hour)
		require.ErrorContains(t, perks.OnReward(w.ctx(), v), "Missing Permissions", "returned, for a retry once fixed")
	}
	warns := lines(buf, slog.LevelWarn)
	require.Len(t, warns, 1, "%s", buf.String())
	assert.Contains(t, warns[0], "Manage Roles")
	assert.Contains(t, warns[0], voterRole)
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
	for _, c := range w.dc.Requests() {
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

// TestRetryWithinRetryAfterIsNotSent: after a 429 (the first call returns
// it at once), a retry within its retry_after waited inside discordgo's rate
// limiter, deaf to ctx and past the term checked before it, then sent the
// write. It now returns the 429's error at once, sending nothing: role calls
// and reminders alike.
func TestRetryWithinRetryAfterIsNotSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, method, path string }{
		{"role", http.MethodPut, "/guilds/"},
		{"reminder", http.MethodPost, "/users/@me/channels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, 1)
			store := voterewards.NewMemoryStore()
			perks := standalone(t, w, store, w.sessions[0])
			require.NoError(t, w.dc.Inject(discordtest.Fault{Method: tc.method, Path: tc.path + "*", RetryAfter: time.Minute}))
			v := expiredVote(1)
			require.NoError(t, perks.SetReminder(w.ctx(), v.PlatformID, true))
			handler := perks.OnExpire
			if tc.name == "role" {
				v.ExpiresAt = time.Now().Add(time.Hour) // still active
				handler = perks.OnReward
			}
			var rl *discordgo.RateLimitError
			require.ErrorAs(t, handler(w.ctx(), v), &rl)

			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- handler(ctx, v) }()
			require.ErrorAs(t, testkit.Recv(t, done, "the retry waited out the retry_after"), &rl)
			sent := 0
			for _, c := range w.dc.Requests() {
				if c.Method == tc.method && strings.Contains(c.Path, tc.path) {
					sent++
				}
			}
			assert.Equal(t, 1, sent, "a call within the retry_after was sent")
		})
	}
}

// TestTokenDiscordEchoesIsScrubbed: a refusal whose body quotes the bot
// token (a proxy before Discord echoing the request) put it in the role
// call's error and the reminder's warning; both name the refusal without it.
func TestTokenDiscordEchoesIsScrubbed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	store := voterewards.NewMemoryStore()
	log := &testlog.Buffer{}
	poller, err := voterewards.New(w.client, voterewards.Config{OnReward: func(context.Context, voterewards.Vote) error { return nil }, Store: store})
	require.NoError(t, err)
	perks, err := voterperks.New(poller, voterperks.Config{BotID: w.dc.ApplicationID(), Session: func() *discordgo.Session { return w.sessions[0] },
		State: store, Role: &voterperks.Role{GuildID: w.guilds[0], RoleID: voterRole}, Reminders: true, Logger: log.Logger()})
	require.NoError(t, err)
	echo := `{"message": "Missing Permissions for {{authorization}}", "code": 50013}`
	require.NoError(t, w.dc.Inject(discordtest.Fault{Method: http.MethodPut, Path: "/guilds/*", Status: http.StatusForbidden, Body: echo}))
	require.NoError(t, w.dc.Inject(discordtest.Fault{Method: http.MethodPost, Path: "/users/@me/channels", Status: http.StatusForbidden, Body: echo}))
	v := expiredVote(1)
	require.NoError(t, perks.SetReminder(w.ctx(), v.PlatformID, true))
	active := v
	active.ExpiresAt = time.Now().Add(time.Hour)

	err = perks.OnReward(w.ctx(), active)
	require.ErrorContains(t, err, "Missing Permissions")
	assert.NotContains(t, err.Error(), w.dc.Token())
	require.NoError(t, perks.OnExpire(w.ctx(), v), "a refused reminder is not retried")
	assert.Contains(t, log.String(), "Missing Permissions")
	assert.NotContains(t, log.String(), w.dc.Token())
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

// TestNewRefusesMisuse: a nil Votes, a BotID or role that is no Discord id,
// a missing Session or State are errors naming what is wrong.
func TestNewRefusesMisuse(t *testing.T) {
	t.Parallel()
	state := voterewards.NewMemoryStore()
	poller, err := voterewards.New(topggClient(t), voterewards.Config{
		OnReward: func(context.Context, voterewards.Vote) error { return nil }, Store: state,
	})
	require.NoError(t, err)
	session := func() *discordgo.Session { return nil }
	_, err = voterperks.New(nil, voterperks.Config{BotID: "1", Session: session})
	assert.ErrorIs(t, err, topgg.ErrNilArgument)
	var typed *voterewards.Poller
	_, err = voterperks.New(typed, voterperks.Config{BotID: "1", Session: session})
	assert.ErrorIs(t, err, topgg.ErrNilArgument)
	for name, cfg := range map[string]voterperks.Config{
		"BotID":   {BotID: "bot", Session: session, State: state},
		"Session": {BotID: "1", State: state},
		"State":   {BotID: "1", Session: session},
		"Role":    {BotID: "1", Session: session, State: state, Role: &voterperks.Role{GuildID: "1"}},
	} {
		_, err := voterperks.New(poller, cfg)
		var ce *topgg.ConfigError
		if assert.ErrorAs(t, err, &ce, name) {
			assert.Equal(t, "voterperks.Config."+name, ce.Field)
		}
	}
	p, err := voterperks.New(poller, voterperks.Config{BotID: "1", Session: session, State: state})
	require.NoError(t, err)
	assert.ErrorIs(t, p.SetReminder(t.Context(), "2", true), voterperks.ErrRemindersOff)
	v := voterewards.Vote{}
	v.PlatformID = "2"
	v.ExpiresAt = time.Now().Add(time.Hour)
	assert.NoError(t, p.OnReward(t.Context(), v), "no role: nothing to do")
}

// TestCommandsPassValidate: the ready definitions, default or overridden,
// pass commands.Validate; a description Discord would refuse does not.
func TestCommandsPassValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, commands.Validate(voterperks.Commands(voterperks.Texts{})))
	custom := voterperks.Commands(voterperks.Texts{VoteDescription: "Vote!", LeaderboardDescription: "Best voters"})
	require.NoError(t, commands.Validate(custom))
	assert.Equal(t, "Vote!", custom[0].Description)
	assert.Equal(t, voterperks.Commands(voterperks.Texts{})[0].Options[0].Description, custom[0].Options[0].Description, "a zero field keeps its default")
	long := voterperks.Commands(voterperks.Texts{VoteDescription: string(make([]byte, 101))})
	assert.Error(t, commands.Validate(long))
}

func topggClient(t testing.TB) *topgg.Client {
	t.Helper()
	c, err := topgg.New("token")
	require.NoError(t, err)
	return c
}

// TestPrintingThePerksWhileVotesArriveIsSafe: fmt of a Perks walked the
// store of its reminders unlocked while votes were ingested (a data race,
// under -race).
func TestPrintingThePerksWhileVotesArriveIsSafe(t *testing.T) {
	t.Parallel()
	store := voterewards.NewMemoryStore()
	poller, err := voterewards.New(noHistory{}, voterewards.Config{Store: store, OnReward: func(context.Context, voterewards.Vote) error { return nil }})
	require.NoError(t, err)
	p, err := voterperks.New(poller, voterperks.Config{BotID: "320000000000000042", Session: func() *discordgo.Session { return nil }, State: store, Reminders: true})
	require.NoError(t, err)
	out := testlog.PrintWhile(func() {
		now := time.Now()
		for n := range 200 {
			tv := topgg.Vote{UserID: fmt.Sprintf("81%016d", n), PlatformID: fmt.Sprintf("31%016d", n), Weight: 1, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
			assert.NoError(t, poller.Ingest(context.Background(), voterewards.Vote{Vote: tv, Origin: voterewards.OriginWebhook}))
		}
	}, p)
	assert.Contains(t, out, "voterperks.Perks")
}

// noHistory is a vote history with no votes.
type noHistory struct{}

func (noHistory) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	return &topgg.VotePage{}, nil
}

// noVoter is a Votes in which nobody has voted: the gate answers everyone.
type noVoter struct{}

func (noVoter) Active(string) voterewards.Status { return voterewards.Status{Covered: true} }

// textCase is one text function of the perks, replaced by bad, and what the
// user sees instead.
type textCase struct {
	name, command, want string
	set                 func(t *voterperks.Texts, bad func())
}

var textCases = []textCase{
	{"Vote", "vote", "Vote for me on Top.gg", func(t *voterperks.Texts, bad func()) {
		t.Vote = func(voterperks.VoteInfo) string { bad(); return "custom vote" }
	}},
	{"VoteExtra", "vote", "Vote for me on Top.gg", func(t *voterperks.Texts, bad func()) {
		t.VoteExtra = func(context.Context, voterperks.VoteInfo) string { bad(); return "custom extra" }
	}},
	{"Leaderboard", "leaderboard", "I could not read the leaderboard", func(t *voterperks.Texts, bad func()) {
		t.Leaderboard = func(time.Time, []voterewards.Standing, error) string { bad(); return "custom board" }
	}},
	{"Gate", premiumName, "This command is for voters", func(t *voterperks.Texts, bad func()) {
		t.Gate = func(voterperks.VoteInfo) string { bad(); return "custom gate" }
	}},
}

// perksWith attaches perks of texts (and a gate on /premium), whose answers
// wait within for their texts, to the open session of shard 0; their records
// go to log.
func (w *world) perksWith(texts voterperks.Texts, log *testlog.Buffer, within time.Duration) {
	w.t.Helper()
	cfg := voterperks.WithAnswerWithin(voterperks.Config{
		BotID: w.dc.ApplicationID(), Session: func() *discordgo.Session { return w.sessions[0] }, State: voterewards.NewMemoryStore(),
		Texts: texts, Logger: log.Logger(),
	}, within)
	p, err := voterperks.New(noVoter{}, cfg)
	require.NoError(w.t, err)
	w.sessions[0].AddHandler(p.Handle)
	w.sessions[0].AddHandler(p.Gate(premium, premiumName))
	require.NoError(w.t, w.sessions[0].Open())
}

// TestPanickingTextIsAnErrorAnswer: a text function that panics (Vote,
// VoteExtra, Leaderboard, the gate's) killed the bot: they run on
// discordgo's goroutines. The user gets the answer an error gets, the panic
// is logged once with its stack, and the next interaction is answered too.
func TestPanickingTextIsAnErrorAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range textCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, 1)
			var texts voterperks.Texts
			tc.set(&texts, func() { panic("a bug in " + tc.name) })
			log := &testlog.Buffer{}
			w.perksWith(texts, log, wait) // a panic is answered at once: the deadline is not what is tested
			for n := range 2 {
				reply := w.interact(0, tc.command, "320000000000000042", nil)
				assert.Contains(t, reply.Content, tc.want, "answer %d", n)
				assert.NotContains(t, reply.Content, "custom", "answer %d", n)
			}
			records := log.String()
			assert.Equal(t, 2, strings.Count(records, "a bug in "+tc.name), "one record per panic: %s", records)
			assert.Contains(t, records, "stack=", "the panic's stack is logged")
		})
	}
}

// TestPanickingGatedHandlerIsAnErrorAnswer: the bot's handler behind the gate
// that panics killed the bot (it runs on discordgo's goroutine). The voter
// gets an error's answer, the panic is logged once with its stack, and the
// next interaction is answered too.
func TestPanickingGatedHandlerIsAnErrorAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	log := &testlog.Buffer{}
	p, err := voterperks.New(alwaysActive{}, voterperks.Config{BotID: w.dc.ApplicationID(),
		Session: func() *discordgo.Session { return w.sessions[0] }, State: voterewards.NewMemoryStore(), Logger: log.Logger()})
	require.NoError(t, err)
	w.sessions[0].AddHandler(p.Gate(func(*discordgo.Session, *discordgo.InteractionCreate) { panic("a bug in premium") }, premiumName))
	require.NoError(t, w.sessions[0].Open())
	for n := range 2 {
		reply := w.interact(0, premiumName, "320000000000000042", nil)
		assert.Contains(t, reply.Content, "Something went wrong", "answer %d", n)
		assert.Equal(t, discordgo.MessageFlagsEphemeral, reply.Flags, "answer %d", n)
	}
	records := log.String()
	assert.Equal(t, 2, strings.Count(records, "a bug in premium"), "one record per panic: %s", records)
	assert.Contains(t, records, "stack=", "the panic's stack is logged")
}

// TestContextDeafTextKeepsDiscordsDeadline: a text function that ignores its
// context (VoteExtra sleeping 8 s) delayed the answer past Discord's 3 s
// ("The application did not respond"). The answer comes without it while it
// still runs; the deadline here is shortened to 100 ms.
func TestContextDeafTextKeepsDiscordsDeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range textCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, 1)
			release := make(chan struct{})
			var texts voterperks.Texts
			tc.set(&texts, func() { <-release })
			log := &testlog.Buffer{}
			w.perksWith(texts, log, 100*time.Millisecond)
			t.Cleanup(func() { close(release) }) // before the world's cleanups: the text returns late
			reply := w.interact(0, tc.command, "320000000000000042", nil)
			assert.Contains(t, reply.Content, tc.want)
			assert.NotContains(t, reply.Content, "custom")
			assert.Contains(t, log.String(), "did not answer in time")
		})
	}
}

// TestVoteExtra: Texts.VoteExtra adds the bot's own line to /vote's answer,
// after the library's text and before the remind option's, for the user who
// asked, under a context that ends within Discord's 3 s; an empty line adds
// nothing.
func TestVoteExtra(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	const points = "320000000000000042"
	w.texts.VoteExtra = func(ctx context.Context, v voterperks.VoteInfo) string {
		deadline, ok := ctx.Deadline()
		assert.True(t, ok && time.Until(deadline) <= 3*time.Second, "no deadline within Discord's 3 s")
		if v.UserID != points {
			return ""
		}
		return fmt.Sprintf("Points: 7 (all time: %d)", v.Stats.Votes)
	}
	bot := w.bot(w.config(), []int{0}, plugin.WithState(voterewards.NewMemoryStore()))
	w.start(bot)
	require.NoError(t, w.sessions[0].Open())
	require.Eventually(t, func() bool { return bot.Active(points).Covered }, wait, tick, "the history was never read")

	on := true
	reply := w.interact(0, "vote", points, &on).Content
	lines := strings.Split(reply, "\n")
	require.GreaterOrEqual(t, len(lines), 3, reply)
	assert.Equal(t, "Points: 7 (all time: 0)", lines[len(lines)-2], reply)
	assert.Equal(t, "I will send you a direct message when you can vote again.", lines[len(lines)-1], reply)

	other := w.interact(0, "vote", "320000000000000043", nil).Content
	assert.NotContains(t, other, "Points")
	assert.False(t, strings.HasSuffix(other, "\n"), "an empty extra added a line: %q", other)
}

// TestRateLimitedAnswerIsAWarningInTime: Discord answering an interaction's
// callback with a 429 is one warning within Discord's 3 s, not a handler
// asleep for the retry_after (discordgo's own wait), since a later answer is
// refused anyway.
func TestRateLimitedAnswerIsAWarningInTime(t *testing.T) {
	t.Parallel()
	dc := testkit.Discord(t, []int{1})
	session := testkit.Sessions(t, dc, 1)[0]
	_, err := session.ApplicationCommandBulkOverwrite(dc.ApplicationID(), "", voterperks.Commands(voterperks.Texts{}))
	require.NoError(t, err)
	log := &testlog.Buffer{}
	p, err := voterperks.New(alwaysActive{}, voterperks.Config{BotID: dc.ApplicationID(),
		Session: func() *discordgo.Session { return session }, State: voterewards.NewMemoryStore(), Logger: log.Logger()})
	require.NoError(t, err)
	session.AddHandler(p.Handle)
	require.NoError(t, session.Open())
	require.NoError(t, dc.Inject(discordtest.Fault{Method: http.MethodPost, Path: "/interactions/*", RetryAfter: time.Minute}))

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	asked := time.Now()
	_, _, err = dc.Interact(ctx, discordtest.InteractionSpec{Command: voterperks.VoteCommand,
		GuildID: discordtest.GuildIDForShard(0, 0, 1), UserID: "320000000000000042"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "could not answer an interaction") },
		wait, tick, "no warning of the refused answer:\n%s", log.String())
	assert.Less(t, time.Since(asked), 3*time.Second)
	assert.Contains(t, log.String(), "level=WARN")
}
