package plugin_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterperks"
)

// commandNames returns the names of cmds, in order.
func commandNames(cmds []*discordgo.ApplicationCommand) []string {
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	return names
}

// TestRegisterCommands: RegisterCommands puts WithCommands's list, then the
// voter perks' commands it does not name, on Discord as global commands,
// through an attached session; again, it leaves the same list (a bulk
// overwrite); the command sync publishes that same list on Top.gg. It
// refuses a plugin without WithCommands or without a session attached, and
// says when Discord refuses.
func TestRegisterCommands(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	ctx := w.ctx()
	cfg := w.config()
	cfg.Autopost = "off"
	perks := plugin.WithVoterPerks(plugin.VoterPerks{BotID: w.dc.ApplicationID()})
	quiet := plugin.WithLogger(slog.New(slog.DiscardHandler))

	noList, err := plugin.New(w.client, cfg, quiet, plugin.WithState(w.state()), perks)
	require.NoError(t, err)
	require.NoError(t, noList.Attach(w.sessions...))
	err = noList.RegisterCommands(ctx, w.dc.ApplicationID())
	require.ErrorIs(t, err, topgg.ErrNotConfigured, "an overwrite would drop the commands the plugin does not know")
	assert.Contains(t, err.Error(), "WithCommands")

	p, err := plugin.New(w.client, cfg, quiet, plugin.WithState(w.state()), perks, plugin.WithCommands(botCommands()))
	require.NoError(t, err)
	require.ErrorIs(t, p.RegisterCommands(ctx, w.dc.ApplicationID()), autopost.ErrNoSessions, "before Attach")
	assert.Empty(t, w.dc.Commands())
	require.NoError(t, p.Attach(w.sessions...))

	// The bot's own /vote is kept over the perks' one of the same name.
	want := append(botCommands(), voterperks.Commands(voterperks.Texts{})[1])
	require.Equal(t, []string{"vote", "stats", "leaderboard"}, commandNames(want))
	for range 2 {
		require.NoError(t, p.RegisterCommands(ctx, w.dc.ApplicationID()))
		got := w.dc.Commands()
		require.Equal(t, commandNames(want), commandNames(got))
		assert.Equal(t, botCommands()[0].Description, got[0].Description)
	}

	w.start(p)
	w.open()
	w.requirePublished(want)

	require.NoError(t, w.dc.Inject(discordtest.Fault{Method: http.MethodPut, Path: "/applications/*", Status: http.StatusForbidden}))
	assert.Error(t, p.RegisterCommands(ctx, w.dc.ApplicationID()), "Discord refused the overwrite")
}

// TestAttachAddsThePerksHandler: Attach adds the voter perks' handler to the
// sessions, so that a /vote is answered, and once.
func TestAttachAddsThePerksHandler(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	ctx := w.ctx()
	// Each event's handlers run, in order, before the next event's: once the
	// second interaction is answered, the first one's handlers have all returned.
	w.sessions[0].SyncEvents = true
	cfg := w.config()
	cfg.Autopost, cfg.SyncCommands = "off", new(false)
	p := w.plugin(cfg, plugin.WithCommands([]*discordgo.ApplicationCommand{}),
		plugin.WithVoterPerks(plugin.VoterPerks{BotID: w.dc.ApplicationID()}))
	require.NoError(t, p.RegisterCommands(ctx, w.dc.ApplicationID()))
	w.open()
	guild := discordtest.GuildIDForShard(0, 0, 1)
	var vote string
	require.Eventually(t, func() bool { // once the shard has its guild
		id, _, err := w.dc.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: guild, UserID: userID(300, 1)})
		vote = id
		return err == nil
	}, wait, tick)
	board, _, err := w.dc.Interact(ctx, discordtest.InteractionSpec{Command: "leaderboard", GuildID: guild, UserID: userID(300, 2)})
	require.NoError(t, err)
	reply, err := w.dc.WaitInteractionReply(ctx, vote)
	require.NoError(t, err)
	assert.Contains(t, reply.Content, "top.gg", "the perks' /vote answer, with the vote link")
	_, err = w.dc.WaitInteractionReply(ctx, board)
	require.NoError(t, err)
	answers := 0
	for _, c := range w.dc.Calls() {
		if c.Method == http.MethodPost && strings.Contains(c.Path, "/interactions/"+vote+"/") && strings.HasSuffix(c.Path, "/callback") {
			answers++
		}
	}
	assert.Equal(t, 1, answers, "the /vote interaction was not answered exactly once")
}

// syncAgainst starts a plugin publishing botCommands while the fake answers
// the PUT of the commands with fault.
func syncAgainst(t *testing.T, fault topggtest.Fault) (*world, *logBuffer) {
	w := newWorld(t, worldSpec{})
	fault.Method, fault.Path = http.MethodPut, commandsPath
	require.NoError(t, w.tg.Inject(fault))
	var logs logBuffer
	cfg := w.config()
	cfg.Autopost = "off"
	w.start(w.plugin(cfg, plugin.WithCommands(botCommands()), plugin.WithLogger(logs.Logger())))
	w.open()
	return w, &logs
}

// TestRefusedCommandsAreNotResent: a 422 for the definitions is final; the
// supervisor does not resend them every restart.
func TestRefusedCommandsAreNotResent(t *testing.T) {
	t.Parallel()
	w, logs := syncAgainst(t, topggtest.Fault{Status: http.StatusUnprocessableEntity, Times: 100})
	require.Eventually(t, func() bool { return w.count(http.MethodPut, commandsPath) == 1 }, wait, tick)
	// The supervisor's first restart would come after 1 s.
	assert.Never(t, func() bool { return w.count(http.MethodPut, commandsPath) > 1 }, 1500*time.Millisecond, 50*time.Millisecond)
	assert.Contains(t, logs.String(), "refused the slash commands")
}

// TestCommandSyncHandlerPanicIsContained: a CommandSyncHandler that panics
// does not make the finished sync a failed job (the supervisor would restart
// it and publish the commands again at every restart); the log names it.
func TestCommandSyncHandlerPanicIsContained(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	var logs logBuffer
	cfg := w.config()
	cfg.Autopost = "off"
	var calls atomic.Int32
	p := w.plugin(cfg, plugin.WithCommands(botCommands()), plugin.WithLogger(logs.Logger()),
		plugin.WithCommandSyncHandler(func(context.Context, commands.Result, error) {
			calls.Add(1)
			panic("dashboard hook bug")
		}))
	w.start(p)
	w.open()
	require.Eventually(t, func() bool { return calls.Load() == 1 }, wait, tick)
	assert.Equal(t, 1, w.count(http.MethodPut, commandsPath))
	// The supervisor's first restart would come after about 1 s.
	assert.Never(t, func() bool { return w.count(http.MethodPut, commandsPath) > 1 || calls.Load() > 1 },
		2500*time.Millisecond, 50*time.Millisecond, "the sync ran again after the handler panicked")
	out := logs.String()
	assert.Contains(t, out, "OnResult panicked") // the handler is the command job's OnResult
	assert.Contains(t, out, "dashboard hook bug")
	assert.NotContains(t, out, "job panicked")
	assert.Equal(t, 1, strings.Count(out, "[running]"), "the stack, once")
}

// TestFailedSyncIsRestarted: a command sync that fails on a service error
// that outlasts the client's retries is logged and tried again (by
// commands.Job, with backoff; the supervisor's restarts are tested in
// supervise_internal_test.go).
func TestFailedSyncIsRestarted(t *testing.T) {
	t.Parallel()
	// The client tries twice; both fail, so the first sync fails as a whole.
	w, logs := syncAgainst(t, topggtest.Fault{Status: http.StatusInternalServerError, Times: 2})
	w.requirePublished(botCommands())
	assert.Equal(t, 3, w.count(http.MethodPut, commandsPath))
	assert.Contains(t, logs.String(), "could not publish the slash commands; retrying")
	assert.NotContains(t, logs.String(), w.tg.Token())
}
