package main

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestE2ECommandsAndServerCount: the bot registers /vote on Discord and
// publishes the same definitions to the listing; server_count follows joins,
// a removal and an outage (which keeps the guild counted); SIGTERM exits 0.
func TestE2ECommandsAndServerCount(t *testing.T) {
	e := newE2E(t)
	bot := e.startBot()
	ctx := e.ctx()

	e.requireCommandsMatch()
	require.Len(t, e.dc.Commands(), 2)
	assert.Equal(t, "vote", e.dc.Commands()[0].Name)
	assert.Equal(t, "leaderboard", e.dc.Commands()[1].Name)
	e.waitServers(3)
	require.NoError(t, e.dc.WaitConnected(ctx, e2eShards))

	// An outage keeps its guild counted: after it, a join shows 4, not 3.
	require.NoError(t, e.dc.Outage(ctx, guild(1, 0)))
	require.NoError(t, e.dc.Join(ctx, guild(2, 1)))
	e.waitServers(4)
	// A removal does not.
	require.NoError(t, e.dc.Remove(ctx, guild(0, 0)))
	e.waitServers(3)
	// The end of the outage does not count the guild twice.
	require.NoError(t, e.dc.Restore(ctx, guild(1, 0)))
	require.NoError(t, e.dc.Join(ctx, guild(3, 0)))
	e.waitServers(4)

	assert.Equal(t, 1, e.count(http.MethodPut, commandsPath), "commands published once")
	for _, r := range e.tg.Requests() {
		if strings.HasPrefix(r.Path, "/v1/") {
			assert.Equal(t, "Bearer "+e2eTopggToken, r.Header.Get("Authorization"), r.Path)
		}
	}

	// A second bot on the same state directory stops at once, saying why.
	second := e.startBot()
	assert.Equal(t, exitFailed, second.exitCode(10*time.Second))
	assert.Contains(t, second.stderr.String(), "state directory is in use by another process")
	assert.Equal(t, 1, e.count(http.MethodPut, commandsPath), "the second bot published nothing")

	bot.terminate()

	// Logs say what happened, one line each.
	recs := bot.records()
	assert.NotEmpty(t, recs)
	assert.GreaterOrEqual(t, bot.countMsg("posted the server count to Top.gg"), 3)
	assert.Equal(t, 1, bot.countMsg("published slash commands"))
	assert.Equal(t, 1, bot.countMsg("registered slash commands on Discord"))
	assert.Equal(t, 1, bot.countMsg("shutting down"))
}

// TestE2EAutopostV0: TOPGG_AUTOPOST=v0 posts the legacy bot stats with the
// bare token, and no v1 metrics.
func TestE2EAutopostV0(t *testing.T) {
	e := newE2E(t)
	e.env["TOPGG_AUTOPOST"] = "v0"
	e.env["TOPGG_VOTE_POLL_INTERVAL"] = "0"
	// Base URLs as an operator may write them: these slashes do not matter.
	e.env["DISCORD_API_URL"] = strings.TrimSuffix(e.dc.APIBase(), "/")
	e.env["TOPGG_API_URL"] = e.tg.URL + "/"
	bot := e.startBot()

	stats := func() topgg.BotStats { st, _ := e.tg.LegacyStats(); return st }
	require.Eventually(t, func() bool { return stats().ServerCount == 3 }, wait, tick)
	st := stats()
	assert.Equal(t, e2eShards, st.ShardCount)
	assert.Equal(t, []int{2, 1}, st.Shards)

	require.NoError(t, e.dc.WaitConnected(e.ctx(), e2eShards))
	require.NoError(t, e.dc.Join(e.ctx(), guild(5, 1)))
	require.Eventually(t, func() bool { return stats().ServerCount == 4 }, wait, tick)

	var v0 int
	for _, r := range e.tg.Requests() {
		if strings.HasPrefix(r.Path, "/bots/") {
			v0++
			assert.Equal(t, "/bots/"+e.dc.BotUserID()+"/stats", r.Path)
			assert.Equal(t, e2eTopggToken, r.Header.Get("Authorization"), "v0 takes the bare token")
		}
	}
	assert.GreaterOrEqual(t, v0, 2)
	assert.Empty(t, e.tg.Metrics(), "no v1 metrics in v0 mode")
	assert.Zero(t, e.count(http.MethodGet, votesPath), "TOPGG_VOTE_POLL_INTERVAL=0 turns polling off")
	bot.stop(os.Interrupt)
}

// TestE2EVotesRewarded: votes over several pages are each rewarded with
// exactly one role grant; /vote answers from the cache; a vote's role is
// taken back when it expires; after SIGTERM and a restart on the same state
// no role is granted again.
func TestE2EVotesRewarded(t *testing.T) {
	e := newE2E(t, topggtest.WithPageSize(10))
	all := makeVotes(35)
	e.tg.AddVote(all...)
	bot := e.startBot()
	ctx := e.ctx()

	require.Eventually(t, func() bool { added, _ := e.grants(); return len(added) == len(all) }, wait, tick)
	// A vote that expires soon: its role is given, then taken back.
	now := time.Now().UTC()
	short := topggtest.Vote{UserID: "800999999999999999", PlatformID: "300999999999999999", CreatedAt: now, ExpiresAt: now.Add(1500 * time.Millisecond)}
	e.tg.AddVote(short)
	require.Eventually(t, func() bool { _, removed := e.grants(); return removed[short.PlatformID] == 1 }, wait, tick)
	assert.False(t, time.Now().Before(short.ExpiresAt), "role taken back before the vote expired")
	assert.Empty(t, e.dc.MemberRoles(guild(0, 0), short.PlatformID))

	e.waitPolls(5)
	added, removed := e.grants()
	assert.Len(t, added, len(all)+1)
	for _, v := range append(all, short) {
		assert.Equal(t, 1, added[v.PlatformID], "role grants of %s", v.PlatformID)
		if v != short {
			assert.Equal(t, []string{rewardRole}, e.dc.MemberRoles(guild(0, 0), v.PlatformID))
		}
	}
	assert.Equal(t, map[string]int{short.PlatformID: 1}, removed)
	assert.Equal(t, len(all)+1, bot.countMsg("vote rewarded: role given"))
	assert.Equal(t, 1, bot.countMsg("vote expired: role taken back"))
	pages := e.count(http.MethodGet, votesPath)
	assert.GreaterOrEqual(t, pages, 4, "35 votes at 10 a page take 4 pages")

	// /vote answers from the cache, without asking Top.gg.
	before := len(e.tg.Requests())
	for _, tc := range []struct{ user, want string }{
		{all[3].PlatformID, "Your vote is active until"},
		{short.PlatformID, "You have no active vote right now"},
		{"300555555555555555", "You have no active vote right now"},
	} {
		id, _, err := e.dc.Interact(ctx, discordtest.InteractionSpec{Command: "vote", GuildID: guild(0, 0), UserID: tc.user})
		require.NoError(t, err)
		reply, err := e.dc.WaitInteractionReply(ctx, id)
		require.NoError(t, err)
		assert.Contains(t, reply.Content, "https://top.gg/bot/"+e.dc.ApplicationID()+"/vote")
		assert.Contains(t, reply.Content, tc.want, tc.user)
		assert.Equal(t, discordgo.MessageFlagsEphemeral, reply.Flags&discordgo.MessageFlagsEphemeral, "only the caller sees it")
	}
	for _, r := range e.tg.Requests()[before:] {
		assert.False(t, strings.HasPrefix(r.Path, votesPath+"/"), "/vote asked Top.gg: %s", r.Path)
	}
	bot.terminate()

	// A clean restart on the same state grants nothing again.
	grantsBefore := len(e.dc.RoleChanges())
	again := e.startBot()
	again.waitMsg("bot is online")
	e.waitPolls(5)
	assert.Equal(t, grantsBefore, len(e.dc.RoleChanges()), "roles granted again after a restart")
	assert.Equal(t, 1, e.count(http.MethodPut, commandsPath), "unchanged commands published again after a restart")
	again.terminate()
}

// TestE2EKillAndRestart: kill -9 while roles are being granted, then a restart
// on the same state directory: no vote is lost, and no more votes are
// rewarded twice than the handlers that can run at once (4).
func TestE2EKillAndRestart(t *testing.T) {
	e := newE2E(t, topggtest.WithPageSize(10))
	// 35 grants of 50 ms each, one after the other (discordgo holds a route's
	// rate-limit bucket for the length of a request): the deliveries last
	// about 1.7 s, and the kill lands at the first grant, with ~30 to come.
	e.slowRoles(50 * time.Millisecond)
	all := makeVotes(35)
	e.tg.AddVote(all...)
	first := e.startBot()

	require.Eventually(t, func() bool { added, _ := e.grants(); return len(added) >= 1 }, wait, time.Millisecond)
	first.kill()
	atKill, _ := e.grants()
	// Only the requests already past the proxy can land after the kill.
	require.Less(t, len(atKill), len(all), "every vote was rewarded before the kill: the test proves nothing")
	t.Logf("killed after %d of %d grants", len(atKill), len(all))

	second := e.startBot()
	require.Eventually(t, func() bool { added, _ := e.grants(); return len(added) == len(all) }, wait, tick,
		"a vote was lost across kill -9")
	e.waitPolls(5)
	added, _ := e.grants()
	twice := requireRewardedAtMostTwice(t, all, added)
	t.Logf("%d votes rewarded twice after kill -9", twice)
	assert.Equal(t, 1, second.countMsg("resuming pending work"), "the restart found the saved state")
	second.terminate()
}

// TestE2EConfigErrors: a bad configuration makes the process exit with a
// non-zero status, at once, with one line on stderr naming the variable, and
// without any request.
func TestE2EConfigErrors(t *testing.T) {
	e := newE2E(t)
	calls := len(e.dc.Requests()) // the warm-up's
	for _, tc := range []struct {
		variable, value string
	}{
		{"DISCORD_TOKEN", ""},
		{"TOPGG_TOKEN", ""},
		{"TOPGG_AUTOPOST", "always"},
		{"TOPGG_AUTOPOST_INTERVAL", "fast"},
		{"TOPGG_VOTE_POLL_INTERVAL", "-1s"},
		{"SHARD_COUNT", "0"},
		{"SHARD_COUNT", "1000000000"},
		{"DISCORD_API_URL", "discord.com/api"},
		{"DISCORD_API_URL", "http://discord.example/api/v9"},
		{"TOPGG_API_URL", "http://example.com/api"},
		{"TOPGG_TOKEN", "a b"},
		{"TOPGG_STATE_DIR", "/proc/nope"},
		{"DATABASE_URL", "mysql://bot:" + pgPassword + "@127.0.0.1/bot"},
		{"DATABASE_URL", "postgres://bot:" + pgPassword + "@127.0.0.1:99999/bot"},
	} {
		env := map[string]string{}
		for k, v := range e.env {
			env[k] = v
		}
		env[tc.variable] = tc.value
		bot := e.start(env)
		assert.Equal(t, exitConfig, bot.exitCode(5*time.Second), "%s=%s", tc.variable, tc.value)
		out := bot.stderr.String()
		assert.Equal(t, 1, strings.Count(out, "\n"), "one line: %q", out)
		assert.True(t, strings.HasPrefix(out, "example-bot: configuration: "+tc.variable+": "), "%q", out)
		assert.NotContains(t, out, "goroutine ")
		assert.NotContains(t, out, pgPassword)
		assert.Empty(t, bot.stdout.String())
	}
	// Missing entirely (not only empty).
	env := map[string]string{}
	for k, v := range e.env {
		if k != "DISCORD_TOKEN" {
			env[k] = v
		}
	}
	bot := e.start(env)
	assert.Equal(t, exitConfig, bot.exitCode(5*time.Second))
	assert.Equal(t, "example-bot: configuration: DISCORD_TOKEN: is required but not set\n", bot.stderr.String())

	assert.Empty(t, e.tg.Requests(), "a configuration error reached Top.gg")
	assert.Len(t, e.dc.Requests(), calls, "a configuration error reached Discord")
}
