package main

import (
	"context"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
)

// TestDemo runs the offline demo in this process, as `go run ./example-bot
// -demo` does, and checks that it completes and tells each step.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo takes over 10 seconds (not with -short)")
	}
	t.Parallel()
	var stdout, stderr syncBuffer
	code := run(context.Background(), []string{"-demo"}, envconfig.MapLookuper(nil), &stdout, &stderr)
	out := stdout.String()
	if !assert.Equal(t, exitOK, code, "stderr: %s", stderr.String()) {
		t.Logf("stdout:\n%s", out)
	}
	assert.Empty(t, stderr.String())
	for _, line := range []string{
		">>> A fake Top.gg and a fake Discord run in this process",
		">>> Both shards are ready, and Top.gg shows 3 servers and 2 shards.",
		`>>> The bot registered its slash commands on Discord and published the same to Top.gg: [{"description":`,
		">>> Two servers add the bot.",
		">>> A server removes the bot: the count goes down.",
		">>> A server has a Discord outage: it still counts",
		">>> Top.gg shows 4 servers.",
		">>> The bot replied (only alice sees it): \"Vote for me on Top.gg: https://top.gg/bot/",
		"Your vote is active until",
		"Streak: 1 · votes this month: 1 · all time: 1\\nTotal (weekend votes count twice): 1 · points: 1",
		">>> alice uses /leaderboard, this month's top voters from the bot's vote ledger. The bot replied: \"Top voters of ",
		"1. <@300000000000000002>: 1 vote (2 with weekend votes counted twice)\\n2. <@300000000000000001>: 1 vote",
		">>> The bot's webhook receiver listens at http://127.0.0.1:",
		"Top.gg sends each vote to the bot's webhook receiver, signed,",
		">>> Both roles were given ",
		"Top.gg's deliveries were answered 204, 204.",
		">>> The bot polled the vote history since",
		"The bot knows them: still 2 role grants.",
		">>> bob uses /vote remind:True",
		"I will send you a direct message when you can vote again.",
		">>> bob's vote expires: the bot takes his role back. alice keeps hers.",
		">>> bob got a direct message: \"Your Top.gg vote has expired: you can vote again now! https://top.gg/bot/",
		">>> Stopping the bot, as on SIGTERM",
		">>> Done. Top.gg received",
		"Discord saw 3 role changes.",
	} {
		assert.Contains(t, out, line)
	}
	// The bot's own log lines are in the narration.
	for _, msg := range []string{
		`msg="posted the server count to Top.gg"`, `msg="published slash commands"`,
		`msg="vote rewarded: role given"`,
	} {
		assert.Contains(t, out, msg)
	}
	assert.Equal(t, 2, strings.Count(out, `msg="vote rewarded: role given"`), "each vote rewarded once")
	assert.Equal(t, 2, strings.Count(out, "source=webhook\n"), "both votes came by webhook first")
	// One INFO line per vote: the expiry's role and reminder are DEBUG (the narration above shows them).
	assert.NotContains(t, out, `msg="vote reminder sent"`)
	assert.Contains(t, out, `msg="webhook receiver listening" component=plugin addr=127.0.0.1:`)
	assert.NotContains(t, out, demoWebhookSecret)
	assert.NotContains(t, out, `msg="vote expired: role taken back"`)
	// A log line comes after the narration of what causes it.
	inOrder(t, out, ">>> bob uses /vote remind:True", `msg="reminder choice saved"`, "I will send you a direct message")
}

// inOrder asserts that each of parts is in out, after the one before it.
func inOrder(t *testing.T, out string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(out[at:], p)
		if !assert.GreaterOrEqual(t, i, 0, "%q is not in the output after %q", p, out[:at][max(0, at-80):]) {
			return
		}
		at += i + len(p)
	}
}
