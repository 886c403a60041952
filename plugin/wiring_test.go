package plugin_test

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
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// hourlyVotes is a Config with the vote poll alone on, every hour.
func hourlyVotes() plugin.Config {
	return plugin.Config{Autopost: "off", SyncCommands: new(false), VotePollInterval: new(time.Hour)}
}

// waitLog waits until logs holds msg.
func waitLog(t *testing.T, logs *logBuffer, msg string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), msg) }, wait, tick, "never logged %q:\n%s", msg, logs.String())
}

// TestCommandsMissingOnDiscordWarnOnce: after READY the plugin reads the
// commands Discord has; one it publishes on Top.gg but Discord lacks, a
// Gate of a misspelled command ("premiun") and a Gate of /vote (which the
// perks answer too) are each one warning naming it (the typo with the
// command meant); registered ones are not named as missing.
func TestCommandsMissingOnDiscordWarnOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	var logs logBuffer
	premium := &discordgo.ApplicationCommand{Name: "premium", Description: "For voters only"}
	p := w.plugin(w.config(), plugin.WithLogger(logs.Logger()), plugin.WithCommands([]*discordgo.ApplicationCommand{premium}),
		plugin.WithVoterPerks(plugin.VoterPerks{BotID: w.dc.BotUserID()}))
	// The bot registers /premium and /vote, but not /leaderboard.
	_, err := w.sessions[0].ApplicationCommandBulkOverwrite(w.dc.ApplicationID(), "",
		[]*discordgo.ApplicationCommand{premium, voterperks.Commands(voterperks.Texts{})[0]})
	require.NoError(t, err)
	w.sessions[0].AddHandler(p.Perks().Gate(func(*discordgo.Session, *discordgo.InteractionCreate) {}, "premiun"))
	w.sessions[0].AddHandler(p.Perks().Gate(func(*discordgo.Session, *discordgo.InteractionCreate) {}, "vote"))
	w.start(p)
	w.open()
	waitLog(t, &logs, "Gate names a command the bot does not have on Discord")
	out := logs.String()
	assert.Contains(t, out, "did you mean premium?")
	assert.Equal(t, 1, strings.Count(out, "is not registered on Discord"), out)
	assert.Contains(t, out, "command=leaderboard")
	assert.Contains(t, out, `msg="Gate names a command the voter perks answer themselves: Discord takes one answer and refuses the other" component=plugin command=vote`)
	assert.NotContains(t, out, "command=premium\n")
	assert.NotContains(t, out, "VoterPerks.BotID")
}

// TestCommandCheckRateLimitedIsAWarningAndRunStops: a 429 on the read of
// Discord's commands after READY is one warning that the check did not run,
// and Run still returns at once when stopped (discordgo's own wait would
// hold it for the whole retry_after).
func TestCommandCheckRateLimitedIsAWarningAndRunStops(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	require.NoError(t, w.dc.Inject(discordtest.Fault{Method: http.MethodGet, Path: "/applications/*", RetryAfter: time.Hour}))
	var logs logBuffer
	premium := &discordgo.ApplicationCommand{Name: "premium", Description: "For voters only"}
	p := w.plugin(hourlyVotes(), plugin.WithLogger(logs.Logger()), plugin.WithCommands([]*discordgo.ApplicationCommand{premium}))
	w.start(p)
	w.open()
	waitLog(t, &logs, `level=WARN msg="could not read the commands on Discord to check them`)
	stopping := time.Now()
	require.NoError(t, w.stop(p))
	assert.Less(t, time.Since(stopping), 5*time.Second)
	assert.NotContains(t, logs.String(), w.dc.Token())
}

// TestWrongBotIDsWarn: a VoterPerks.BotID that is not the READY user's, and
// a webhook vote for another bot (the webhook at Top.gg is another
// listing's), are each one warning naming both ids.
func TestWrongBotIDsWarn(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	var logs logBuffer
	cfg := hourlyVotes()
	cfg.WebhookAddr, cfg.WebhookSecrets = "127.0.0.1:0", plugin.WebhookSecrets{testSecret}
	p := w.plugin(cfg, plugin.WithLogger(logs.Logger()), plugin.WithVoterPerks(plugin.VoterPerks{BotID: "123456789012345678"}))
	w.start(p)
	w.open()
	waitLog(t, &logs, "VoterPerks.BotID is not this bot's id")
	assert.Contains(t, logs.String(), "bot_id=123456789012345678 ready_user="+w.dc.BotUserID())
	require.Eventually(t, func() bool { return p.WebhookAddr() != nil }, wait, tick)
	for range 2 {
		<-sendVoteOnceListening(t, p.WebhookAddr().String()) // project.platform_id 3
	}
	waitLog(t, &logs, "webhook votes are for another bot")
	assert.Equal(t, 1, strings.Count(logs.String(), "webhook votes are for another bot"))
	assert.Contains(t, logs.String(), "votes_for=3 bot="+w.dc.BotUserID())
}

// TestWithoutVoterPerksIsSaid: without WithVoterPerks, Perks() is nil and
// says so once, naming the option; a user's /vote, which the plugin does
// not answer, is one warning.
func TestWithoutVoterPerksIsSaid(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	var logs logBuffer
	p := w.plugin(hourlyVotes(), plugin.WithLogger(logs.Logger()))
	assert.Nil(t, p.Perks())
	assert.Nil(t, p.Perks())
	assert.Equal(t, 1, strings.Count(logs.String(), "without plugin.WithVoterPerks"), logs.String())

	_, err := w.sessions[0].ApplicationCommandBulkOverwrite(w.dc.ApplicationID(), "", voterperks.Commands(voterperks.Texts{}))
	require.NoError(t, err)
	w.start(p)
	w.open()
	for range 2 {
		_, _, err = w.dc.Interact(w.ctx(), discordtest.InteractionSpec{Command: "vote", GuildID: w.dc.GuildIDs()[0], UserID: userID(300, 1)})
		require.NoError(t, err)
	}
	waitLog(t, &logs, "WithVoterPerks is off: unless the bot answers it itself")
	assert.Equal(t, 1, strings.Count(logs.String(), "WithVoterPerks is off"))
}

// TestWebhookSecretsWithoutAReceiverWarn: webhook secrets with neither
// WebhookAddr nor a WebhookHandler taken are one warning naming both fixes,
// discord.OpenGrace after Run starts; a mounted handler is not warned of.
func TestWebhookSecretsWithoutAReceiverWarn(t *testing.T) {
	t.Parallel()
	for _, mounted := range []bool{false, true} {
		w := newWorld(t, worldSpec{})
		var logs logBuffer
		fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		cfg := hourlyVotes()
		cfg.WebhookSecrets = plugin.WebhookSecrets{testSecret}
		p := w.plugin(cfg, plugin.WithClock(fake), plugin.WithLogger(logs.Logger()))
		if mounted {
			_, err := p.WebhookHandler()
			require.NoError(t, err)
		}
		w.start(p)
		require.Eventually(t, func() bool { return fake.Timers() > 0 }, wait, tick)
		fake.Advance(discord.OpenGrace)
		waitLog(t, &logs, "sessions attached but not opened") // logged after the receiver check
		if mounted {
			assert.NotContains(t, logs.String(), "no receiver serves them")
			continue
		}
		assert.Contains(t, logs.String(), "no receiver serves them: set Config.WebhookAddr (TOPGG_WEBHOOK_ADDR), or mount Plugin.WebhookHandler()")
	}
}

// TestWebhookServer404sLoggedOncePerPath: a request for another path than
// the receiver's (a wrong webhook URL at Top.gg) gets 404 and one warning
// per path, for the first few paths only.
func TestWebhookServer404sLoggedOncePerPath(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	var logs logBuffer
	cfg := hourlyVotes()
	cfg.WebhookAddr, cfg.WebhookSecrets = "127.0.0.1:0", plugin.WebhookSecrets{testSecret}
	p := w.plugin(cfg, plugin.WithLogger(logs.Logger()))
	w.start(p)
	require.Eventually(t, func() bool { return p.WebhookAddr() != nil }, wait, tick)
	post := func(path string) {
		resp, err := http.Post("http://"+p.WebhookAddr().String()+path, "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	}
	post("/webhook")
	post("/webhook")
	for i := range 20 {
		post("/scan" + strings.Repeat("x", i))
	}
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "path=/webhook "), out)
	assert.Equal(t, 8, strings.Count(out, "a request for another path got 404"), out)
	assert.Contains(t, out, "receiver=/topgg/webhook")
}

// TestVotesNoWebhookBroughtWarnOnce: with a receiver mounted, new votes
// that only the poll finds (Top.gg's deliveries never arrive) are one
// warning after three, naming the receiver's path.
func TestVotesNoWebhookBroughtWarnOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	var logs logBuffer
	cfg := hourlyVotes()
	cfg.VotePollInterval = new(20 * time.Millisecond)
	cfg.WebhookSecrets = plugin.WebhookSecrets{testSecret}
	p := w.plugin(cfg, plugin.WithLogger(logs.Logger()))
	_, err := p.WebhookHandler() // mounted, but Top.gg sends elsewhere
	require.NoError(t, err)
	w.start(p)
	now := time.Now().UTC()
	for i := range 5 {
		w.tg.AddVote(topggtest.Vote{UserID: userID(800, i), PlatformID: userID(300, i), Weight: 1,
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	}
	waitLog(t, &logs, "no webhook delivery brought")
	w.waitPolls(3)
	assert.Equal(t, 1, strings.Count(logs.String(), "no webhook delivery brought"))
	assert.Contains(t, logs.String(), "path=/topgg/webhook")
}

// sendVote sends the receiver at addr one signed vote.create for the
// project of Top.gg id project and Discord id bot, and returns its status
// (0 on a failure it reports; it may run in a condition's goroutine).
func sendVote(t *testing.T, addr, project, bot string) int {
	t.Helper()
	now := time.Now()
	body := []byte(`{"type":"vote.create","data":{"id":"1","weight":1,"created_at":"` +
		now.UTC().Format(time.RFC3339Nano) + `","expires_at":"` + now.Add(12*time.Hour).UTC().Format(time.RFC3339Nano) +
		`","project":{"id":"` + project + `","type":"bot","platform":"discord","platform_id":"` + bot +
		`"},"user":{"id":"4","platform_id":"500000000000000005","name":"u","avatar_url":""}}}`)
	req, err := webhook.NewRequest(context.Background(), "http://"+addr+"/topgg/webhook", testSecret, now, body)
	if !assert.NoError(t, err) {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if !assert.NoError(t, err) {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// startWithWebhooks starts a plugin of w's with hourly polling and its
// webhook receiver on a free port, logging into the returned buffer, and
// opens w's sessions.
func startWithWebhooks(w *world) (*plugin.Plugin, *logBuffer) {
	logs := &logBuffer{}
	cfg := hourlyVotes()
	cfg.WebhookAddr, cfg.WebhookSecrets = "127.0.0.1:0", plugin.WebhookSecrets{testSecret}
	p := w.plugin(cfg, plugin.WithLogger(logs.Logger()))
	w.start(p)
	w.open()
	return p, logs
}

// TestTokenOfAnotherProjectWarns: the token's project (read once at READY
// with webhooks on) is not the project this bot's webhook votes are for:
// one warning naming both projects; votes for the token's own project are
// not warned of.
func TestTokenOfAnotherProjectWarns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	p, logs := startWithWebhooks(w)
	require.Eventually(t, func() bool { return p.WebhookAddr() != nil && w.count(http.MethodGet, "/v1/projects/@me") > 0 }, wait, tick)
	tokenProject, bot := w.tg.Project().ID, w.dc.BotUserID()
	// The read's answer may still be on its way: a vote of the token's own
	// project until the check is armed shows that the right one is never named.
	require.Eventually(t, func() bool {
		assert.Less(t, sendVote(t, p.WebhookAddr().String(), tokenProject, bot), 300)
		sendVote(t, p.WebhookAddr().String(), "999999999999999999", bot)
		return strings.Contains(logs.String(), "the Top.gg token is another project's")
	}, wait, 50*time.Millisecond)
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "the Top.gg token is another project's"))
	assert.Contains(t, out, "token_project="+tokenProject+" bot_project=999999999999999999 bot="+bot)
	assert.NotContains(t, out, "webhook votes are for another bot")
}

// TestTokensProjectUnreadWarns: a failed read of the token's project at
// READY (with webhooks on) is a warning saying the check is off, not silence.
func TestTokensProjectUnreadWarns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	require.NoError(t, w.tg.Inject(topggtest.Fault{Method: http.MethodGet, Path: "/v1/projects/@me", Status: http.StatusInternalServerError, Times: 1 << 20}))
	_, logs := startWithWebhooks(w)
	waitLog(t, logs, `level=WARN msg="could not read the token's project from Top.gg`)
	assert.NotContains(t, logs.String(), w.tg.Token(), "the error names no token")
}

// TestWithVoterPerksChecksItsWiring: the perks need vote polling (a
// ConfigError naming the field otherwise) and a valid bot id and role (the
// voterperks error); without the option Perks is nil. The end-to-end tests
// are voterperks's (one process and a fleet, through this option).
func TestWithVoterPerksChecksItsWiring(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	cfg := w.config()
	good := plugin.VoterPerks{BotID: w.dc.ApplicationID(), Reminders: true,
		Role: &voterperks.Role{GuildID: "1", RoleID: "2"}}

	off := cfg
	off.VotePollInterval = new(time.Duration(0))
	_, err := plugin.New(w.client, off, plugin.WithState(w.state()), plugin.WithVoterPerks(good))
	var ce *topgg.ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "plugin.Config.VotePollInterval", ce.Field)

	bad := good
	bad.Role = &voterperks.Role{GuildID: "guild"}
	_, err = plugin.New(w.client, cfg, plugin.WithState(w.state()), plugin.WithVoterPerks(bad))
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "voterperks.Config.Role", ce.Field)

	p, err := plugin.New(w.client, cfg, plugin.WithState(w.state()), plugin.WithVoterPerks(good))
	require.NoError(t, err)
	require.NotNil(t, p.Perks())
	assert.ErrorIs(t, p.Perks().OnReward(t.Context(), vote1()), voterperks.ErrNoSession, "no session attached yet")
	plain, err := plugin.New(w.client, cfg, plugin.WithState(w.state()))
	require.NoError(t, err)
	assert.Nil(t, plain.Perks())
}

// vote1 is an active vote of a user, as the handlers get it.
func vote1() voterewards.Vote {
	now := time.Now().UTC()
	return voterewards.Vote{Vote: topgg.Vote{UserID: "100000000000000001", PlatformID: "300000000000000001",
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}, Origin: voterewards.OriginHistory}
}
