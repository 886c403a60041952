package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
)

// TestE2ESIGTERMDuringRateLimitedReward: Discord answers every role grant 429
// with a minute's Retry-After. The bot waits it out under the handler's
// context, so a SIGTERM ends the wait when the plugin cancels the handlers:
// the bot exits 0 within 10 s, where discordgo's own sleep made it exit 1
// after its 8 s budget.
func TestE2ESIGTERMDuringRateLimitedReward(t *testing.T) {
	e := newE2E(t)
	require.NoError(t, e.dc.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", RetryAfter: time.Minute, Times: 100}))
	e.tg.AddVote(makeVotes(2)...)
	bot := e.startBot()
	bot.waitMsg("bot is online")
	bot.waitMsg("Discord is rate-limiting the bot; waiting")

	bot.terminate()
	assert.Equal(t, 1, bot.countMsg("gateway connections closed"), "the shards were not closed")
	assert.Zero(t, bot.countMsg("vote rewarded: role given"))
	assert.Empty(t, e.dc.MemberRoles(guild(0, 0), makeVotes(1)[0].PlatformID))
}

// TestE2EEndlessAnswerToRoleGrant: Discord answers a role grant with a body
// that never ends. The bot reads 8 MiB of it, fails that attempt with a
// bounded-body error (before: it read until it had grown past 500 MiB), and
// the next attempt gives the role.
func TestE2EEndlessAnswerToRoleGrant(t *testing.T) {
	e := newE2E(t)
	require.NoError(t, e.dc.Inject(discordtest.Fault{Method: "PUT", Path: "/guilds/*", Body: "{", Endless: true}))
	votes := makeVotes(1)
	e.tg.AddVote(votes...)
	bot := e.startBot()
	bot.waitMsg("vote rewarded: role given")
	assert.Contains(t, bot.stderr.String(), "response body too large (over 8388608 bytes)")
	assert.Equal(t, []string{rewardRole}, e.dc.MemberRoles(guild(0, 0), votes[0].PlatformID))
	bot.terminate()
}
