package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// Distinctive tokens: no output of the bot may hold them.
const (
	discordToken = "minimal-discord-token-4be1f2"
	topggToken   = "minimal-topgg-token-9a7c3d"
)

// TestMinimalBot builds the README's first bot and runs it against the fake
// Top.gg and the fake Discord: it registers the perks' /vote and
// /leaderboard on Discord and publishes the same on Top.gg, posts its server
// count, rewards a vote of the history, and exits 0 soon after SIGTERM.
func TestMinimalBot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bot (not with -short)")
	}
	t.Parallel()
	const shardCount = 2
	guilds := []string{discordtest.GuildIDForShard(0, 0, shardCount), discordtest.GuildIDForShard(1, 0, shardCount),
		discordtest.GuildIDForShard(0, 1, shardCount)}
	dc, err := discordtest.NewServer(discordtest.WithToken(discordToken), discordtest.WithShardCount(shardCount), discordtest.WithGuilds(guilds...))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	project := topggtest.DiscordBot()
	project.PlatformID = dc.BotUserID()
	tg, err := topggtest.NewServer(topggtest.WithToken(topggToken), topggtest.WithProject(project))
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	now := time.Now().UTC()
	const voter = "300000000000000042"
	tg.AddVote(topggtest.Vote{UserID: "800000000000000042", PlatformID: voter, Weight: 1, CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)})

	dir := t.TempDir()
	bin := filepath.Join(dir, "minimal")
	gobin, err := exec.LookPath("go") // go test puts the go command that runs it first on PATH
	require.NoError(t, err)
	out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	logPath := filepath.Join(dir, "stderr")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	t.Cleanup(func() { _ = logFile.Close() })
	cmd := exec.Command(bin)
	cmd.Env = []string{ // nothing of the test's environment
		"DISCORD_TOKEN=" + discordToken, "TOPGG_TOKEN=" + topggToken,
		"DISCORD_API_URL=" + dc.APIBase(), "TOPGG_API_URL=" + tg.URL, "SHARD_COUNT=2",
		"TOPGG_STATE_DIR=" + filepath.Join(dir, "state"), "TOPGG_VOTE_POLL_INTERVAL=100ms",
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	var waitErr error
	done := make(chan struct{}) // closed once the bot exited, waitErr set
	go func() { waitErr = cmd.Wait(); close(done) }()
	running := func() bool {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	logs := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	t.Cleanup(func() {
		if running() {
			_ = cmd.Process.Kill()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Error("the killed bot did not exit within 30 s")
			}
		}
		for _, token := range []string{discordToken, topggToken} {
			assert.NotContains(t, logs(), token, "a token is in the bot's output")
		}
		if t.Failed() {
			t.Logf("the bot's output:\n%s", logs())
		}
	})
	eventually := func(what string, cond func() bool) {
		t.Helper()
		require.Eventually(t, func() bool { return cond() || !running() }, 20*time.Second, 10*time.Millisecond, "no %s", what)
		require.True(t, running(), "the bot exited before %s", what)
	}

	eventually("server count", func() bool {
		m := tg.Metrics()
		return len(m) > 0 && m[len(m)-1].Metrics["server_count"] == len(guilds) && m[len(m)-1].Metrics["shard_count"] == shardCount
	})
	eventually("commands on Top.gg", func() bool { _, ok := tg.Commands(); return ok })
	onDiscord := dc.Commands()
	var names []string
	for _, c := range onDiscord {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"vote", "leaderboard"}, names, "the perks' commands on Discord")
	want, err := commands.Normalize(onDiscord)
	require.NoError(t, err)
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	published, _ := tg.Commands()
	assert.JSONEq(t, string(wantJSON), string(published), "Top.gg has what Discord has")
	eventually("reward of the vote", func() bool { return strings.Contains(logs(), voter+" voted") })

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-done:
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			t.Fatalf("exit status %d after SIGTERM", ee.ExitCode())
		}
		require.NoError(t, waitErr)
	case <-time.After(10 * time.Second):
		t.Fatal("the bot did not exit within 10 s of SIGTERM")
	}
	assert.Equal(t, 1, strings.Count(logs(), voter+" voted"), "one vote, one reward")
}
