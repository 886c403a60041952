package main

import (
	"bytes"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestE2EWebhookRewardsWithoutThePoll: with the receiver on, a vote is
// rewarded by its webhook (the poll runs once an hour here, so only the
// webhook can do it; its latency is BENCHMARKS.md's), answered 204; after a
// restart the poll reads the same vote from the history and rewards nothing
// again.
func TestE2EWebhookRewardsWithoutThePoll(t *testing.T) {
	e, hp := newWebhookE2E(t, false)
	e.env["TOPGG_VOTE_POLL_INTERVAL"] = "1h"
	bot := e.startHooked(hp)

	v := freshVote(1, 12*time.Hour)
	start := time.Now()
	e.tg.AddVote(v)
	require.Eventually(t, func() bool { added, _ := e.grants(); return added[v.PlatformID] == 1 }, wait, time.Millisecond)
	t.Logf("webhook to role grant: %v", time.Since(start))
	d := e.waitDeliveries(1)
	require.Len(t, d[0].Attempts, 1)
	assert.Equal(t, http.StatusNoContent, d[0].Attempts[0].Status)
	assert.Equal(t, []string{"webhook"}, bot.waitSources(v.PlatformID))
	bot.terminate()

	// The restart polls often, so that waiting for later polls proves the
	// first one (which reads the vote from the history) was processed.
	e.env["TOPGG_VOTE_POLL_INTERVAL"] = "100ms"
	again := e.startHooked(hp)
	e.waitPolls(3)
	added, _ := e.grants()
	assert.Equal(t, 1, added[v.PlatformID], "the history's copy of a webhook vote was rewarded again")
	assert.Empty(t, again.sourcesOf(v.PlatformID))
	again.terminate()
}

// TestE2EPollThenWebhook: the poll rewards a vote first (its webhook is held
// back); the webhook that arrives afterwards is answered 2xx and rewards
// nothing.
func TestE2EPollThenWebhook(t *testing.T) {
	e, hp := newWebhookE2E(t, false)
	bot := e.startHooked(hp)
	release := hp.hold()
	defer release()

	v := freshVote(2, 12*time.Hour)
	e.tg.AddVote(v)
	require.Eventually(t, func() bool { added, _ := e.grants(); return added[v.PlatformID] == 1 }, wait, tick)
	assert.Equal(t, []string{"history"}, bot.waitSources(v.PlatformID))
	release()
	d := e.waitDeliveries(1)
	assert.True(t, d[0].Delivered(), "the late webhook was refused: %+v", d[0].Attempts)
	e.waitPolls(3)
	added, _ := e.grants()
	assert.Equal(t, 1, added[v.PlatformID])
	bot.terminate()
}

// TestE2ELegacyWebhookThenPoll: a v0 webhook (no timestamp, no id) rewards
// the vote at once; the history's record of it, with its own timestamp, is
// the same vote: no second reward, after a restart either.
func TestE2ELegacyWebhookThenPoll(t *testing.T) {
	e, hp := newWebhookE2E(t, true)
	e.env["TOPGG_VOTE_POLL_INTERVAL"] = "1h"
	bot := e.startHooked(hp)

	v := freshVote(3, 12*time.Hour)
	v.CreatedAt = v.CreatedAt.Add(-2 * time.Second) // the history's time differs from the receipt time
	e.tg.AddVote(v)
	require.Eventually(t, func() bool { added, _ := e.grants(); return added[v.PlatformID] == 1 }, wait, tick)
	assert.Equal(t, []string{"webhook-v0"}, bot.waitSources(v.PlatformID))
	d := e.waitDeliveries(1)
	assert.Equal(t, 0, d[0].Version)
	assert.True(t, d[0].Delivered())
	bot.terminate()

	e.env["TOPGG_VOTE_POLL_INTERVAL"] = "100ms" // later polls prove the first was processed
	again := e.startHooked(hp)
	e.waitPolls(3)
	added, _ := e.grants()
	assert.Equal(t, 1, added[v.PlatformID], "the history's copy of a v0 webhook vote was rewarded again")
	again.terminate()
}

// TestE2EWebhookLostThenRecoveredByThePoll: two votes whose every delivery
// attempt (1 + 3 retries) fails with a 5xx, one while the bot is not running
// yet, one while the receiver answers 500: Top.gg gives up on both, and the
// poll rewards each, once.
func TestE2EWebhookLostThenRecoveredByThePoll(t *testing.T) {
	e, hp := newWebhookE2E(t, false)
	early := freshVote(4, 12*time.Hour)
	e.tg.AddVote(early) // no bot yet: 503 from the proxy
	d := e.waitDeliveries(1)
	require.Len(t, d[0].Attempts, 4)
	assert.False(t, d[0].Delivered())

	bot := e.startHooked(hp)
	hp.fail.Store(true)
	late := freshVote(5, 12*time.Hour)
	e.tg.AddVote(late)
	d = e.waitDeliveries(2)
	require.Len(t, d[1].Attempts, 4)
	for _, a := range d[1].Attempts {
		assert.Equal(t, http.StatusInternalServerError, a.Status)
	}
	require.Eventually(t, func() bool {
		added, _ := e.grants()
		return added[early.PlatformID] == 1 && added[late.PlatformID] == 1
	}, wait, tick, "the poll did not recover the lost webhooks")
	e.waitPolls(3)
	added, _ := e.grants()
	assert.Equal(t, 1, added[early.PlatformID])
	assert.Equal(t, 1, added[late.PlatformID])
	assert.Equal(t, []string{"history"}, bot.waitSources(early.PlatformID))
	assert.Equal(t, []string{"history"}, bot.waitSources(late.PlatformID))
	bot.terminate()
}

// TestE2EReplayedDelivery: a captured, validly signed delivery sent again
// within the timestamp window (an attacker's replay, or Top.gg's own retry of
// a delivery whose answer was lost) is answered 2xx and rewards nothing again.
func TestE2EReplayedDelivery(t *testing.T) {
	e, hp := newWebhookE2E(t, false)
	e.env["TOPGG_VOTE_POLL_INTERVAL"] = "1h"
	bot := e.startHooked(hp)
	v := freshVote(6, 12*time.Hour)
	e.tg.AddVote(v)
	require.Eventually(t, func() bool { added, _ := e.grants(); return added[v.PlatformID] == 1 }, wait, tick)
	d := e.waitDeliveries(1)[0]
	require.True(t, d.Delivered())

	addr := bot.webhookAddr()
	for range 3 {
		req, err := http.NewRequestWithContext(e.ctx(), http.MethodPost, "http://"+addr+"/topgg/webhook", bytes.NewReader(d.Body))
		require.NoError(t, err)
		req.Header = d.Attempts[0].Header.Clone()
		req.Close = true
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Less(t, resp.StatusCode, 300, "a replay is a duplicate, not an error Top.gg would retry")
	}
	// Give the bot the time a reward takes (it took one above): wait on
	// Discord having seen nothing more.
	before := len(e.dc.Requests())
	require.Eventually(t, func() bool { return len(e.dc.Requests()) == before }, wait, 100*time.Millisecond)
	added, _ := e.grants()
	assert.Equal(t, 1, added[v.PlatformID], "a replayed delivery was rewarded again")
	bot.terminate()
}

// TestE2ECrashRightAfterWebhook2xx: the bot answers a webhook 2xx and is
// killed (SIGKILL) before the reward reaches Discord; the vote is in no
// history the poll could recover it from. After a restart on the same state
// the vote is rewarded: the 2xx came only once the vote was durably stored.
func TestE2ECrashRightAfterWebhook2xx(t *testing.T) {
	e, hp := newWebhookE2E(t, false)
	direct := e.env["DISCORD_API_URL"]
	arrived := e.slowRoles(time.Minute) // the reward cannot land before the kill
	e.env["TOPGG_VOTE_POLL_INTERVAL"] = "1h"
	bot := e.startHooked(hp)

	v := freshVote(7, 12*time.Hour)
	var killed atomic.Bool
	kill := func(status int) {
		if status >= 200 && status < 300 && killed.CompareAndSwap(false, true) {
			_ = bot.cmd.Process.Kill()
		}
	}
	hp.afterAnswer.Store(&kill)
	status := postSignedVia(e, hp, voteCreateBody(v, e.dc.BotUserID()))
	require.Equal(t, http.StatusNoContent, status)
	require.True(t, killed.Load())
	bot.waitKilled()
	t.Logf("role grants that reached the proxy before the kill: %d", arrived())
	added, _ := e.grants()
	require.Zero(t, added[v.PlatformID], "the reward landed before the kill: the test proves nothing")
	assert.Empty(t, slices.DeleteFunc(e.tg.Votes(), func(x topggtest.Vote) bool { return x.PlatformID != v.PlatformID }),
		"the vote must not be in the history")

	hp.afterAnswer.Store(nil)
	e.env["DISCORD_API_URL"] = direct
	again := e.startHooked(hp)
	require.Eventually(t, func() bool { added, _ := e.grants(); return added[v.PlatformID] == 1 }, wait, tick,
		"a vote answered 2xx was lost across kill -9")
	assert.Equal(t, []string{"webhook"}, again.waitSources(v.PlatformID))
	again.terminate()
}
