package plugin_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestMain runs a process of a test's fleet when asked (childMain), says in
// one line why the fleet tests skip when redis-server is missing, and fails
// the package if any test leaves a goroutine behind.
func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(childMain(name)) // a process of the resumed-leader test's fleet
	}
	if !redistest.Announce("plugin") {
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}

// TestStopLeavesNoGoroutine runs alone (not parallel): with every job busy
// (a post held in flight by the service, reward handlers held running until
// the stop is under way, sync done), cancelling Run's context makes Run wait
// for the handlers and cancel the post; once Run returned nothing of the
// plugin runs, and once the sessions and servers are closed no goroutine is left.
func TestStopLeavesNoGoroutine(t *testing.T) {
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
		w.tg, err = topggtest.NewServer(topggtest.WithProject(project), topggtest.WithPageSize(5))
		require.NoError(t, err)
		defer w.tg.Close()
		w.client = newClient(t, w.tg)
		for i := range 2 {
			s, err := dc.NewSession(i, 2)
			require.NoError(t, err)
			w.sessions = append(w.sessions, s)
		}
		defer testkit.CloseAll(w.sessions)

		const nVotes = 40
		w.tg.AddVote(votes(nVotes)...)
		rewards := newRecorder()
		cfg := w.config()
		// Held handlers: they run until the test lets them go, which it does
		// only once Close is under way, so some are running when Close comes
		// however fast the machine is, and Close must wait for them.
		var running atomic.Int32
		release := make(chan struct{})
		held := func(ctx context.Context, v voterewards.Vote) error {
			running.Add(1)
			defer running.Add(-1)
			select {
			case <-release:
				return rewards.handle(ctx, v)
			case <-ctx.Done(): // only if the test fails before it lets them go
				return ctx.Err()
			}
		}
		dir := t.TempDir()
		st, err := boltstate.Open(dir)
		require.NoError(t, err)
		p, err := plugin.New(w.client, cfg, plugin.WithState(st), plugin.WithCommands(botCommands()), plugin.WithRewardHandler(held),
			plugin.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		require.NoError(t, p.Attach(w.sessions...))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		closeErr := make(chan error, 1)
		go func() { closeErr <- p.Run(ctx) }()
		w.open()
		require.Eventually(t, func() bool { _, ok := w.tg.Commands(); return ok }, wait, tick)
		require.Eventually(t, func() bool { return len(w.tg.Metrics()) > 0 }, wait, tick)
		require.Eventually(t, func() bool { return running.Load() > 0 }, wait, tick, "no reward handler started")

		// Hold the next post in flight, then close while it waits.
		require.NoError(t, w.tg.Inject(topggtest.Fault{Method: http.MethodPatch, Path: metricsPath, Delay: time.Minute, Times: 10}))
		require.NoError(t, dc.Join(w.ctx(), discordtest.GuildIDForShard(1, 0, 2)))
		require.Eventually(t, func() bool { return w.count(http.MethodPatch, metricsPath) > 1 }, wait, tick)

		cancel()
		// Run waits for the held handlers (well within its 10 s timeout).
		require.Never(t, func() bool { return len(closeErr) > 0 }, 300*time.Millisecond, tick,
			"Run returned while reward handlers were still running")
		require.Positive(t, running.Load(), "a handler was running while Close waited")
		released := time.Now()
		close(release)
		select {
		case err := <-closeErr:
			require.NoError(t, err)
		case <-time.After(wait):
			t.Fatal("Run did not return once the handlers were let go")
		}
		require.Less(t, time.Since(released), 5*time.Second, "Run waited for the held post")
		require.Less(t, rewards.distinct(), nVotes, "stopping ends delivery: the queued votes stay pending")
		// The sessions and servers still run, so goleak cannot tell yet; the
		// plugin's own goroutines must be gone once Run returns. A goroutine
		// counted as done by a WaitGroup may still have to return from its
		// last call, so it gets a moment (seconds, on a loaded machine).
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Empty(c, jobGoroutines(), "goroutines of the plugin's jobs outlive Run")
		}, wait, 10*time.Millisecond)
		// Nothing of the plugin uses the state any more: it closes (its Close
		// waits for the poller's Run) and the directory can be opened again.
		require.NoError(t, st.Close())
		st, err = boltstate.Open(dir)
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
			"go-topgg/autopost.(*Poster).", "sourcegraph/conc/pool.",
		} {
			if strings.Contains(g, mark) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}
