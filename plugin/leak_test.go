package plugin_test

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/internal/discordtest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestMain fails the package if any test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestCloseLeavesNoGoroutine runs alone (not parallel): with every job busy
// (a post held in flight by the service, votes being delivered, sync done),
// Close stops them all, and once the sessions and servers are closed no
// goroutine is left.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	func() {
		// Cleanups of this inner test scope would run after VerifyNone, so
		// everything is closed by hand, in order.
		dc, err := discordtest.NewServer(discordtest.WithShardCount(2),
			discordtest.WithGuilds(discordtest.GuildIDForShard(0, 0, 2), discordtest.GuildIDForShard(0, 1, 2)))
		require.NoError(t, err)
		defer dc.Close()
		w := &world{t: t, dc: dc, shards: 2}
		project := topggtest.DiscordBot()
		project.PlatformID = dc.BotUserID()
		w.tg = topggtest.NewServer(topggtest.WithProject(project), topggtest.WithPageSize(5))
		defer w.tg.Close()
		w.client = newClient(t, w.tg)
		for i := range 2 {
			s, err := dc.NewSession(i, 2)
			require.NoError(t, err)
			w.sessions = append(w.sessions, s)
		}
		defer w.closeSessions()

		w.tg.AddVotes(votes(40)...)
		rewards := newRecorder()
		cfg := w.config()
		// Slow handlers: some are running when Close comes, and Close must wait for them.
		slow := func(ctx context.Context, v voterewards.Vote) error {
			time.Sleep(100 * time.Millisecond)
			return rewards.handle(ctx, v)
		}
		p, err := plugin.New(w.client, cfg, plugin.WithCommands(botCommands()), plugin.WithRewardHandler(slow))
		require.NoError(t, err)
		p.Attach(w.sessions...)
		require.NoError(t, p.Start(context.Background()))
		w.open()
		require.Eventually(t, func() bool { _, ok := w.tg.Commands(); return ok }, wait, tick)
		require.Eventually(t, func() bool { return len(w.tg.Metrics()) > 0 }, wait, tick)
		require.Eventually(t, func() bool { return rewards.distinct() > 0 }, wait, tick)

		// Hold the next post in flight, then close while it waits.
		w.tg.Inject(topggtest.Fault{Method: http.MethodPatch, Path: metricsPath, Delay: time.Minute, Times: 10})
		require.NoError(t, dc.Join(w.ctx(), discordtest.GuildIDForShard(1, 0, 2)))
		require.Eventually(t, func() bool { return w.count(http.MethodPatch, metricsPath) > 1 }, wait, tick)

		require.Less(t, rewards.distinct(), 40, "every vote was delivered already: no handler was running at Close")
		closed := time.Now()
		require.NoError(t, p.Close())
		require.Less(t, time.Since(closed), 5*time.Second, "Close waited for the held post")
		// The sessions and servers still run, so goleak cannot tell yet; the
		// plugin's own goroutines must be gone the moment Close returns.
		left := jobGoroutines()
		for i := 0; i < 10 && len(left) > 0; i++ {
			// A goroutine counted as done by a WaitGroup still has to return
			// from its last call; give it a moment, far less than a job takes.
			time.Sleep(time.Millisecond)
			left = jobGoroutines()
		}
		require.Empty(t, left, "goroutines of the plugin's jobs outlive Close")
		require.NoError(t, p.Close(), "Close twice")
		// The state is saved and released: the directory can be opened again.
		st, err := voterewards.OpenStore(cfg.StateDir)
		require.NoError(t, err)
		require.NoError(t, st.Close())
	}()
}

// jobGoroutines returns the stacks of the goroutines that run the plugin's
// jobs: its supervisor, the vote poller and its workers, the poster's loop,
// command sync. Discordgo's event goroutines that pass through autopost's
// counting handlers belong to the sessions and are not included.
func jobGoroutines() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "testing.tRunner") {
			continue // a test's goroutine (this one, or a parallel test waiting its turn)
		}
		for _, mark := range []string{
			"go-topgg/plugin.", "go-topgg/voterewards.", "go-topgg/commands.",
			"go-topgg/autopost.(*Poster).run", "sourcegraph/conc/pool.",
		} {
			if strings.Contains(g, mark) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}
