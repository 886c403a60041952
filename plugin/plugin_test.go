package plugin_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// botCommands is what a bot registers on Discord: enough shape (options,
// choices) for normalisation to matter.
func botCommands() []*discordgo.ApplicationCommand {
	return []*discordgo.ApplicationCommand{
		{Name: "vote", Description: "Vote for the bot on Top.gg"},
		{
			Name: "stats", Description: "Show the bot's statistics",
			Options: []*discordgo.ApplicationCommandOption{{
				Type: discordgo.ApplicationCommandOptionString, Name: "scope", Description: "Which numbers",
				Choices: []*discordgo.ApplicationCommandOptionChoice{{Name: "servers", Value: "servers"}, {Name: "votes", Value: "votes"}},
			}},
		},
	}
}

// TestCommandSyncOnFirstReady: the commands given with WithCommands are
// published once the first session is READY, not before, and once.
func TestCommandSyncOnFirstReady(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{shards: 2, perShard: 1})
	p := w.plugin(w.config(), plugin.WithCommands(botCommands()))
	w.start(p)

	// The vote poller runs at once; sync is still waiting for READY.
	w.waitPolls(3)
	assert.Zero(t, w.count(http.MethodPut, commandsPath), "commands published before any READY")

	w.open()
	w.requirePublished(botCommands())
	w.waitPolls(5)
	assert.Equal(t, 1, w.count(http.MethodPut, commandsPath), "published once, not once per shard or per poll")
}

// TestCommandSyncFromDiscord: without WithCommands, the plugin publishes the
// application's commands as Discord has them.
func TestCommandSyncFromDiscord(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	_, err := w.sessions[0].ApplicationCommandBulkOverwrite(w.dc.ApplicationID(), "", botCommands())
	require.NoError(t, err)
	require.Len(t, w.dc.Commands(), 2)

	p := w.plugin(w.config())
	w.start(p)
	w.open()
	w.requirePublished(w.dc.Commands())
	w.requirePublished(botCommands())
}

// TestCommandSyncEmptyClears: a non-nil empty WithCommands publishes an empty
// list, clearing the listing's commands.
func TestCommandSyncEmptyClears(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	cfg := w.config()
	cfg.Autopost = "off"
	p := w.plugin(cfg, plugin.WithCommands([]*discordgo.ApplicationCommand{}))
	w.start(p)
	w.open()
	require.Eventually(t, func() bool { _, ok := w.tg.Commands(); return ok }, wait, tick)
	got, _ := w.tg.Commands()
	assert.JSONEq(t, `[]`, string(got))
}

// TestPosterWaitsForEveryShard: the first post goes out once every attached
// shard is ready and carries every shard's guilds; later changes follow.
func TestPosterWaitsForEveryShard(t *testing.T) {
	t.Parallel()
	for _, shards := range []int{1, 3} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			t.Parallel()
			const perShard = 2
			w := newWorld(t, worldSpec{shards: shards, perShard: perShard})
			var posts atomic.Int32
			p := w.plugin(w.config(), plugin.WithOnPost(func(r autopost.Result) {
				assert.NoError(t, r.Err)
				posts.Add(1)
			}))
			w.start(p)

			if shards > 1 {
				w.open(0, 1)
				require.Eventually(t, func() bool { return p.Counts().Servers == 2*perShard }, wait, tick)
				assert.False(t, p.Counts().Complete())
				w.waitPolls(5) // time for a premature post to show
				assert.Empty(t, w.tg.Metrics(), "posted before every shard was ready")
				w.open(2)
			} else {
				w.waitPolls(3)
				assert.Empty(t, w.tg.Metrics(), "posted before READY")
				w.open()
			}

			total := shards * perShard
			require.Eventually(t, func() bool { return len(w.tg.Metrics()) > 0 }, wait, tick)
			first := w.tg.Metrics()[0]
			assert.Equal(t, map[string]int{"server_count": total, "shard_count": shards}, first.Metrics)

			require.NoError(t, w.dc.Join(w.ctx(), discordtest.GuildIDForShard(10, shards-1, shards)))
			require.Eventually(t, func() bool { return w.lastServers() == total+1 }, wait, tick)
			c := p.Counts()
			assert.True(t, c.Complete())
			assert.Equal(t, total+1, c.Servers)
			assert.Equal(t, shards, c.Shards)
			// OnPost runs once the answer is back, a moment after the fake recorded the post.
			assert.Eventually(t, func() bool { return posts.Load() >= 2 }, wait, tick, "WithOnPost sees the attempts")
		})
	}
}

// TestAutopostV0: Autopost "v0" posts the legacy bot stats, with the bare
// token, and no v1 metrics.
func TestAutopostV0(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{shards: 2, perShard: 3})
	cfg := w.config()
	cfg.Autopost = "v0"
	w.start(w.plugin(cfg))
	w.open()
	require.Eventually(t, func() bool { st, ok := w.tg.LegacyStats(); return ok && st.ServerCount == 6 }, wait, tick)
	st, _ := w.tg.LegacyStats()
	assert.Equal(t, 2, st.ShardCount)
	assert.Empty(t, w.tg.Metrics())
	for _, r := range w.tg.Requests() {
		if strings.HasPrefix(r.Path, "/bots/") {
			assert.Equal(t, w.tg.Token(), r.Header.Get("Authorization"), "v0 takes the bare token")
		}
	}
}

// TestVotesRewardedOnceEach: votes over several pages, and votes arriving
// later, reach the reward handler once each; Active answers from memory.
func TestVotesRewardedOnceEach(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{tgOpts: []topggtest.Option{topggtest.WithPageSize(10)}})
	all := votes(40)
	w.tg.AddVote(all[:35]...)
	cfg := w.config()
	cfg.Autopost, cfg.SyncCommands = "off", new(false)
	rewards := newRecorder()
	p := w.plugin(cfg, plugin.WithState(voterewards.NewMemoryStore()), plugin.WithRewardHandler(rewards.handle))
	assert.Equal(t, voterewards.Status{}, p.Active(all[0].PlatformID), "nothing is known before Start")
	w.start(p)

	require.Eventually(t, func() bool { return rewards.distinct() == 35 }, wait, tick)
	w.tg.AddVote(all[35:]...)
	require.Eventually(t, func() bool { return rewards.distinct() == 40 }, wait, tick)
	w.waitPolls(5)
	assert.Equal(t, 40, rewards.total(), "a vote was handled twice")
	for key, n := range rewards.snapshot() {
		assert.Equal(t, 1, n, key)
	}

	require.Eventually(t, func() bool { return p.Active(all[0].PlatformID).Covered }, wait, tick)
	for _, v := range all {
		for _, id := range []string{v.PlatformID, v.UserID} {
			st := p.Active(id)
			assert.True(t, st.Active, id)
			assert.True(t, st.Until.Equal(v.ExpiresAt), "%s: until %v, want %v", id, st.Until, v.ExpiresAt)
		}
	}
	st := p.Active(userID(399, 1))
	assert.False(t, st.Active)
	assert.True(t, st.Covered)
}

// TestExpiryHandlerFires: a rewarded vote's expiry reaches the expiry handler
// once, when it expires and not before.
func TestExpiryHandlerFires(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	now := time.Now().UTC()
	short := topggtest.Vote{UserID: userID(800, 1), PlatformID: userID(300, 1), CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(500 * time.Millisecond)}
	long := topggtest.Vote{UserID: userID(800, 2), PlatformID: userID(300, 2), CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)}
	w.tg.AddVote(short, long)
	cfg := w.config()
	cfg.Autopost, cfg.SyncCommands = "off", new(false)
	rewards, expiries := newRecorder(), newRecorder()
	p := w.plugin(cfg, plugin.WithState(voterewards.NewMemoryStore()),
		plugin.WithRewardHandler(rewards.handle), plugin.WithExpiryHandler(expiries.handle))
	w.start(p)

	require.Eventually(t, func() bool { return rewards.distinct() == 2 }, wait, tick)
	require.Eventually(t, func() bool { return expiries.distinct() == 1 }, wait, tick)
	assert.False(t, time.Now().Before(short.ExpiresAt), "expiry handler called before the vote expired")
	w.waitPolls(5)
	expiries.mu.Lock()
	assert.Len(t, expiries.votes, 1)
	assert.Equal(t, short.PlatformID, expiries.votes[0].PlatformID)
	expiries.mu.Unlock()
	assert.False(t, p.Active(short.PlatformID).Active)
	assert.True(t, p.Active(long.PlatformID).Active)
}

// TestRewardHandlerPanicIsContained: a reward handler that panics is retried
// and never takes the plugin (or the test process) down.
func TestRewardHandlerPanicIsContained(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	w.tg.AddVote(votes(3)...)
	cfg := w.config()
	cfg.Autopost, cfg.SyncCommands = "off", new(false)
	rewards := newRecorder()
	var tried sync.Map // vote key -> struct{}: the first call of each vote panics
	var panics atomic.Int32
	handler := func(ctx context.Context, v voterewards.Vote) error {
		if _, again := tried.LoadOrStore(v.Key(), struct{}{}); !again {
			panics.Add(1)
			panic("reward handler bug")
		}
		return rewards.handle(ctx, v)
	}
	p := w.plugin(cfg, plugin.WithState(voterewards.NewMemoryStore()), plugin.WithRewardHandler(handler))
	w.start(p)
	require.Eventually(t, func() bool { return rewards.distinct() == 3 }, wait, tick)
	w.waitPolls(3)
	assert.Equal(t, int32(3), panics.Load())
	assert.Equal(t, 3, rewards.total())
}

// TestJobsOff: a job turned off starts nothing of its own, while the others run.
func TestJobsOff(t *testing.T) {
	t.Parallel()

	t.Run("autopost", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, worldSpec{perShard: 2})
		cfg := w.config()
		cfg.Autopost = "off"
		p := w.plugin(cfg, plugin.WithCommands(botCommands()))
		w.start(p)
		w.open()
		w.requirePublished(botCommands()) // READY has been handled
		w.waitPolls(5)
		assert.Zero(t, w.count(http.MethodPatch, metricsPath))
		for _, r := range w.tg.Requests() {
			assert.NotContains(t, r.Path, "/stats")
		}
		assert.Equal(t, autopost.Counts{}, p.Counts())
	})

	t.Run("sync", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, worldSpec{perShard: 2})
		cfg := w.config()
		cfg.SyncCommands = new(false)
		p := w.plugin(cfg, plugin.WithCommands(botCommands()))
		w.start(p)
		w.open()
		require.Eventually(t, func() bool { return w.lastServers() == 2 }, wait, tick) // READY has been handled
		w.waitPolls(5)
		assert.Zero(t, w.count(http.MethodPut, commandsPath))
		hash, err := w.state().LoadHash(w.ctx())
		require.NoError(t, err)
		assert.Empty(t, hash, "no command hash saved")
	})

	t.Run("polling", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, worldSpec{perShard: 2})
		w.tg.AddVote(votes(2)...)
		cfg := w.config()
		cfg.VotePollInterval = new(time.Duration(0))
		// A reward handler is refused here (TestNewRefusesAHandlerItsJobNeverCalls).
		p := w.plugin(cfg, plugin.WithCommands(botCommands()))
		w.start(p)
		w.open()
		w.requirePublished(botCommands())
		require.Eventually(t, func() bool { return w.lastServers() == 2 }, wait, tick)
		// A join and its post take at least one autopost interval.
		require.NoError(t, w.dc.Join(w.ctx(), discordtest.GuildIDForShard(5, 0, 1)))
		require.Eventually(t, func() bool { return w.lastServers() == 3 }, wait, tick)
		assert.Zero(t, w.count(http.MethodGet, votesPath))
		assert.Equal(t, voterewards.Status{}, p.Active(votes(1)[0].PlatformID))
		snap, err := w.state().Load(w.ctx())
		require.NoError(t, err)
		assert.Zero(t, snap.Checkpoint, "the votes' state was used")
		assert.Empty(t, snap.Seen)
	})

	t.Run("all", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, worldSpec{perShard: 1})
		p := w.plugin(plugin.Config{Autopost: "off", SyncCommands: new(false), VotePollInterval: new(time.Duration(0))})
		ready := make(chan struct{})
		w.sessions[0].AddHandler(func(*discordgo.Session, *discordgo.Ready) { close(ready) })
		w.start(p)
		w.open()
		select {
		case <-ready:
		case <-time.After(wait):
			t.Fatal("no READY")
		}
		// A job started by mistake would send its first request within
		// milliseconds of READY (sync) or of Run (polling); the window is many
		// times the test intervals of w.config() and a supervisor restart (1 s).
		assert.Never(t, func() bool { return len(w.tg.Requests()) > 0 }, 1500*time.Millisecond, 10*time.Millisecond,
			"a job that is off sent a request")
		require.NoError(t, w.stop(p))
		assert.Empty(t, w.tg.Requests())
	})
}

// TestStateSurvivesRestart: a plugin started again on the same state
// directory, opened again, delivers no vote twice and does not publish
// unchanged commands again.
func TestStateSurvivesRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{perShard: 1})
	w.tg.AddVote(votes(5)...)
	cfg := w.config()
	cfg.Autopost = "off"
	rewards := newRecorder()
	var logs logBuffer
	opts := []plugin.Option{plugin.WithCommands(botCommands()), plugin.WithRewardHandler(rewards.handle), plugin.WithLogger(logs.Logger())}

	dir := t.TempDir()
	st, err := boltstate.Open(dir)
	require.NoError(t, err)
	first := w.plugin(cfg, append(opts, plugin.WithState(st))...)
	w.start(first)
	w.open()
	w.requirePublished(botCommands())
	require.Eventually(t, func() bool { return rewards.distinct() == 5 }, wait, tick)
	require.Eventually(t, func() bool {
		h, err := st.LoadHash(w.ctx())
		return err == nil && h != ""
	}, wait, tick, "the command hash was never saved")
	require.NoError(t, w.stop(first))
	require.NoError(t, st.Close())
	testkit.CloseAll(w.sessions)

	// A restarted bot: new sessions, a new plugin, the same directory.
	for i := range w.sessions {
		s, err := w.dc.NewSession(i, w.shards)
		require.NoError(t, err)
		w.sessions[i] = s
	}
	w.tg.AddVote(votes(7)[5:]...)
	st, err = boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, st.Close()) })
	second := w.plugin(cfg, append(opts, plugin.WithState(st))...)
	w.start(second)
	w.open()
	require.Eventually(t, func() bool { return rewards.distinct() == 7 }, wait, tick)
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "unchanged since the last sync")
	}, wait, tick)
	w.waitPolls(3)
	assert.Equal(t, 7, rewards.total(), "a vote was rewarded again after the restart")
	assert.Equal(t, 1, w.count(http.MethodPut, commandsPath))
}

// A *Plugin printed whole (a careless log line) shows no webhook secret: fmt
// prints unexported fields by reflection, without the secrets' own redaction.
func TestPrintedPluginHoldsNoWebhookSecret(t *testing.T) {
	t.Parallel()
	c, err := topgg.New("x.y.z")
	require.NoError(t, err)
	cfg := plugin.Config{
		Autopost: "off", SyncCommands: new(false), VotePollInterval: new(time.Minute),
		WebhookSecrets: plugin.WebhookSecrets{"whs_v1SEKRIT"}, WebhookAuth: "v0SEKRIT",
	}
	p, err := plugin.New(c, cfg, plugin.WithLogger(slog.New(slog.DiscardHandler)), plugin.WithState(voterewards.NewMemoryStore()))
	require.NoError(t, err)
	// With a session attached, the bot token must not show either: fmt
	// prints a *discordgo.Session reached under %s, %q, %d or %x in full.
	const botToken = "MTIzNDU2Nzg5MDEyMzQ1Njc4.BOTSEKRIT.token"
	s, err := discordgo.New("Bot " + botToken)
	require.NoError(t, err)
	require.NoError(t, p.Attach(s))
	out := testlog.PrintAll(p)
	assert.Contains(t, out, "plugin.Plugin{shards attached: [0]")
	assert.NotContains(t, out, "SEKRIT")
	assert.NotContains(t, out, fmt.Sprintf("%x", "v0SEKRIT"))
	assert.NotContains(t, out, fmt.Sprintf("%x", "BOTSEKRIT"))
	for _, z := range []*plugin.Plugin{nil, {}} {
		for _, verb := range []string{"%v", "%s", "%d", "%x"} {
			assert.Equal(t, "plugin.Plugin(not made by plugin.New)", fmt.Sprintf(verb, z))
		}
	}
	_, err = p.WebhookHandler()
	assert.NoError(t, err, "the receiver is still on")
}

// TestOneProcessBotLinksNoRedisPostgresOrPrometheus builds a bot on the
// plugin alone, in one process (example-bot/minimal), and sums the sizes of
// its symbols by dependency: a bot that does not use the fleet, the
// PostgreSQL store or metrics must not carry their code (issue 19: what a
// bot does not use, it must not pay for in memory either, and linked code is
// resident). Before, the plugin held a *fleet.Fleet in its structs and
// asserted the vote store to *pgstore.Store, which kept 665 KB of go-redis,
// 64 KB of fleet and 274 KB of pgx in such a bot.
func TestOneProcessBotLinksNoRedisPostgresOrPrometheus(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command builds the probe")
	bin := filepath.Join(t.TempDir(), "pluginonly")
	build := exec.CommandContext(t.Context(), goTool, "build", "-o", bin, "github.com/dblkit/go-topgg/example-bot/minimal")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	nm := exec.CommandContext(t.Context(), goTool, "tool", "nm", "-size", bin)
	out, err = nm.Output()
	require.NoError(t, err)

	sizes := linkedBytes(t, out, map[string]string{
		"go-redis":   "github.com/redis/go-redis/",
		"fleet":      "github.com/dblkit/go-topgg/fleet.",
		"pgx":        "github.com/jackc/",
		"pgstore":    "github.com/dblkit/go-topgg/pgstore.",
		"prometheus": "github.com/prometheus/",
		"protobuf":   "google.golang.org/protobuf/",
		"plugin":     "github.com/dblkit/go-topgg/plugin.",
		"testing":    "testing.",
	})
	require.Positive(t, sizes["plugin"], "the probe links the plugin: the symbol names are as read")
	for _, dep := range []string{"pgx", "pgstore", "prometheus", "protobuf", "testing"} {
		assert.Zero(t, sizes[dep], "%s is linked", dep)
	}
	// What stays is what package initialisation reaches (fleet's Lua
	// scripts, hashed at init; go-redis's own inits): 5.4 KB and 1.8 KB when
	// this test was written.
	assert.Less(t, sizes["go-redis"], 32<<10, "the Redis client is linked")
	assert.Less(t, sizes["fleet"], 8<<10, "the fleet's code is linked")
}

// linkedBytes sums, per name of want, the sizes of the symbols of `go tool
// nm -size` output whose name holds its substring.
func linkedBytes(t *testing.T, nm []byte, want map[string]string) map[string]int {
	t.Helper()
	sizes := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(nm))
	for sc.Scan() {
		f := strings.Fields(sc.Text()) // address size type name
		if len(f) < 4 {
			continue
		}
		size, err := strconv.Atoi(f[1])
		require.NoError(t, err, sc.Text())
		name := strings.Join(f[3:], " ")
		for k, sub := range want {
			if strings.Contains(name, sub) {
				sizes[k] += size
			}
		}
	}
	require.NoError(t, sc.Err())
	return sizes
}

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

	require.NoError(t, w.dc.Inject(discordtest.Fault{Method: http.MethodPut, Path: "/applications/*", Status: http.StatusForbidden,
		Body: `{"message": "Missing Access for {{authorization}}", "code": 50001}`})) // a proxy echoing the token
	err = p.RegisterCommands(ctx, w.dc.ApplicationID())
	require.ErrorContains(t, err, "Missing Access", "Discord refused the overwrite")
	assert.NotContains(t, err.Error(), w.dc.Token())

	// A 429 (the daily limit of command writes is hours away) is returned, not slept on past ctx.
	require.NoError(t, w.dc.Inject(discordtest.Fault{Method: http.MethodPut, Path: "/applications/*", RetryAfter: time.Hour}))
	done := make(chan error, 1)
	go func() { done <- p.RegisterCommands(ctx, w.dc.ApplicationID()) }()
	var rl *discordgo.RateLimitError
	require.ErrorAs(t, testkit.Recv(t, done, "RegisterCommands slept on a 429"), &rl)
	assert.Equal(t, time.Hour, rl.RetryAfter)
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
	for _, c := range w.dc.Requests() {
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
