package plugin_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// votesOnly returns w.config() with autopost and command sync off.
func votesOnly(w *world) plugin.Config {
	cfg := w.config()
	cfg.Autopost, cfg.SyncCommands = "off", new(false)
	return cfg
}

// TestRunIsExclusiveAndRerunnable: a second Run while one runs returns
// topgg.ErrRunning at once; after Run returned, Run may be called again and the jobs
// work again.
func TestRunIsExclusiveAndRerunnable(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	rewards := newRecorder()
	p := w.plugin(votesOnly(w), plugin.WithState(voterewards.NewMemoryStore()), plugin.WithRewardHandler(rewards.handle))
	w.tg.AddVote(votes(2)...)
	w.start(p)
	require.Eventually(t, func() bool { return rewards.distinct() == 2 }, wait, tick)
	require.ErrorIs(t, p.Run(context.Background()), topgg.ErrRunning)
	require.NoError(t, w.stop(p))
	assert.Equal(t, voterewards.Status{}, p.Active(votes(1)[0].PlatformID), "no stale answer once Run returned")

	w.tg.AddVote(votes(3)[2:]...)
	ctx, cancel := context.WithCancel(context.Background())
	again := make(chan error, 1)
	go func() { again <- p.Run(ctx) }()
	require.Eventually(t, func() bool { return rewards.distinct() == 3 }, wait, tick, "the second Run polls again")
	cancel()
	select {
	case err := <-again:
		require.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("the second Run did not return")
	}
	assert.Equal(t, 3, rewards.total(), "a vote was rewarded twice across the two Runs")
}

// TestAttachMisuse: Attach after Run (running or returned), of an open
// session, of no or a nil session, is an error, not a warning nobody reads.
func TestAttachMisuse(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{shards: 2})
	cfg := w.config()
	p, err := plugin.New(w.client, cfg, plugin.WithState(w.state()), plugin.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)

	require.ErrorIs(t, p.Attach(), topgg.ErrNilArgument)
	require.ErrorIs(t, p.Attach(w.sessions[0], nil), topgg.ErrNilArgument)

	w.open(1)
	require.Eventually(t, func() bool { return w.sessions[1].State.SessionID != "" }, wait, tick, "READY")
	require.ErrorIs(t, p.Attach(w.sessions[0], w.sessions[1]), autopost.ErrSessionOpen)

	require.NoError(t, p.Attach(w.sessions[0]))
	w.startPolled(p) // Run is under way
	require.ErrorIs(t, p.Attach(w.sessions[0]), plugin.ErrAttachAfterRun)
	require.NoError(t, w.stop(p))
	require.ErrorIs(t, p.Attach(w.sessions[0]), plugin.ErrAttachAfterRun, "also after Run returned")
}

// TestRunWithoutSessions: autopost or command sync with no session attached
// would wait forever for a READY: Run says so at once. Votes alone need none.
func TestRunWithoutSessions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	for _, cfg := range []plugin.Config{
		{SyncCommands: new(false), VotePollInterval: new(time.Duration(0))},
		{Autopost: "off", VotePollInterval: new(time.Duration(0))},
	} {
		p, err := plugin.New(w.client, cfg, plugin.WithState(w.state()), plugin.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		require.ErrorIs(t, p.Run(w.ctx()), autopost.ErrNoSessions, "%v", cfg)
	}

	rewards := newRecorder()
	w.tg.AddVote(votes(1)...)
	p, err := plugin.New(w.client, votesOnly(w), plugin.WithState(w.state()), plugin.WithRewardHandler(rewards.handle),
		plugin.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	w.start(p)
	require.Eventually(t, func() bool { return rewards.distinct() == 1 }, wait, tick)
}

// TestStopHoldsNoLock: while Run waits for a reward handler that is slow to
// stop, the plugin's other methods answer at once (Attach with its error, a
// second Run with topgg.ErrRunning, Active, Counts): no lock is held while waiting.
func TestStopHoldsNoLock(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	w.tg.AddVote(votes(1)...)
	cfg := votesOnly(w)
	cfg.VoteStopGrace = time.Minute // the handler decides when Run returns
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := func(context.Context, voterewards.Vote) error {
		once.Do(func() { close(entered) })
		<-release
		return nil
	}
	p := w.plugin(cfg, plugin.WithRewardHandler(slow))
	w.start(p)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the reward handler was never called")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- w.stop(p) }()
	defer close(release)

	answered := make(chan struct{})
	go func() {
		defer close(answered)
		assert.ErrorIs(t, p.Attach(w.sessions[0]), plugin.ErrAttachAfterRun)
		assert.ErrorIs(t, p.Run(context.Background()), topgg.ErrRunning)
		_ = p.Active(votes(1)[0].PlatformID)
		_ = p.Counts()
	}()
	select {
	case <-answered:
	case <-time.After(wait):
		t.Fatal("the plugin's methods block while Run waits for its jobs")
	}
	assert.Empty(t, stopped, "Run returned while the handler still ran")
}

// TestRefusedTokenEndsRun: a token the service refuses ends Run with an error
// that says so (ErrJobFailed, topgg.ErrUnauthorized) instead of restarting the
// job forever.
func TestRefusedTokenEndsRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	bad, err := topgg.New("not-the-token", topgg.WithBaseURL(w.tg.URL), topgg.WithHTTPClient(w.tg.Client()))
	require.NoError(t, err)
	cfg := w.config()
	cfg.Autopost, cfg.VotePollInterval = "off", new(time.Duration(0))
	var reported []error
	var mu sync.Mutex
	p, err := plugin.New(bad, cfg, plugin.WithState(w.state()), plugin.WithCommands(botCommands()), plugin.WithLogger(slog.New(slog.DiscardHandler)),
		plugin.WithCommandSyncHandler(func(_ context.Context, _ commands.Result, err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, err)
		}))
	require.NoError(t, err)
	require.NoError(t, p.Attach(w.sessions...))
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background()) }()
	w.open()
	select {
	case err := <-done:
		require.ErrorIs(t, err, plugin.ErrJobFailed)
		require.ErrorIs(t, err, topgg.ErrUnauthorized)
		assert.NotContains(t, err.Error(), "not-the-token")
	case <-time.After(wait):
		t.Fatal("Run goes on with a refused token")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reported, 1, "the sync handler hears of the failure")
	assert.ErrorIs(t, reported[0], topgg.ErrUnauthorized)
}

// TestCommandSyncHandler: every sync attempt reaches the handler: a refused
// definition as its error (the plugin runs on), a published list as its result.
func TestCommandSyncHandler(t *testing.T) {
	t.Parallel()
	for _, refused := range []bool{false, true} {
		w := newWorld(t, worldSpec{})
		if refused {
			require.NoError(t, w.tg.Inject(topggtest.Fault{Method: http.MethodPut, Path: commandsPath, Status: http.StatusUnprocessableEntity, Times: 100}))
		}
		type outcome struct {
			r   commands.Result
			err error
		}
		got := make(chan outcome, 10)
		cfg := w.config()
		cfg.Autopost = "off"
		p := w.plugin(cfg, plugin.WithCommands(botCommands()),
			plugin.WithCommandSyncHandler(func(_ context.Context, r commands.Result, err error) { got <- outcome{r, err} }))
		w.start(p)
		w.open()
		select {
		case o := <-got:
			if refused {
				var api *topgg.APIError
				require.ErrorAs(t, o.err, &api)
				assert.Equal(t, http.StatusUnprocessableEntity, api.StatusCode)
			} else {
				require.NoError(t, o.err)
				assert.Equal(t, len(botCommands()), o.r.Commands)
			}
		case <-time.After(wait):
			t.Fatal("the sync handler was not called")
		}
		w.waitPolls(2)
		require.NoError(t, w.stop(p), "a refused definition does not end Run")
	}
}

// TestJobSettingsReachTheJobs: the vote settings of Config reach the poller
// (VoteAttempts bounds the calls of a failing handler), and the autopost ready
// timeout reaches the poster (one of two shards ready is posted after it).
func TestJobSettingsReachTheJobs(t *testing.T) {
	t.Parallel()

	t.Run("votes", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, worldSpec{})
		w.tg.AddVote(votes(1)...)
		cfg := votesOnly(w)
		cfg.VoteAttempts, cfg.VoteRetryDelay, cfg.VoteConcurrency = 2, time.Millisecond, 1
		var mu sync.Mutex
		calls := 0
		gaveUp := make(chan error, 1)
		p := w.plugin(cfg, plugin.WithRewardHandler(func(context.Context, voterewards.Vote) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			return assert.AnError
		}), plugin.WithGiveUpHandler(func(_ voterewards.Vote, err error) { gaveUp <- err }))
		w.start(p)
		select {
		case err := <-gaveUp:
			var de *voterewards.DeliveryError
			require.ErrorAs(t, err, &de)
		case <-time.After(wait):
			t.Fatal("the plugin never gave up: VoteAttempts did not reach the poller")
		}
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, 2, calls)
	})

	t.Run("autopost", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, worldSpec{shards: 2, perShard: 3})
		cfg := w.config()
		cfg.SyncCommands, cfg.VotePollInterval = new(false), new(time.Duration(0))
		cfg.AutopostReadyTimeout = 200 * time.Millisecond
		// Past the ready timeout the poster reports the missing shard (and
		// still posts nothing: never a partial total).
		missing := make(chan []int, 1)
		p := w.plugin(cfg, plugin.WithOnPost(func(r autopost.Result) {
			if r.Outcome == autopost.OutcomeIncomplete {
				select {
				case missing <- r.Missing:
				default:
				}
			}
		}))
		w.start(p)
		w.open(0) // shard 1 never opens
		select {
		case got := <-missing:
			assert.Equal(t, []int{1}, got)
		case <-time.After(wait):
			t.Fatal("the ready timeout did not reach the poster (its default is 5 minutes)")
		}
		assert.Equal(t, -1, w.lastServers(), "a partial total was posted")
	})
}

// TestDefaultLoggerIsSlogDefault: without WithLogger the plugin's warnings go
// to slog.Default(), so a forgotten option still shows them. Not parallel: it
// sets the process's default logger.
func TestDefaultLoggerIsSlogDefault(t *testing.T) {
	var buf logBuffer
	old := slog.Default()
	slog.SetDefault(buf.Logger())
	defer slog.SetDefault(old)
	// A client of nothing on this machine: the poll fails, and says so.
	client, err := topgg.New("token", topgg.WithBaseURL("http://127.0.0.1:1/api"))
	require.NoError(t, err)
	p, err := plugin.New(client, plugin.Config{
		Autopost: "off", SyncCommands: new(false),
		WebhookAddr: "127.0.0.1:0", WebhookSecrets: plugin.WebhookSecrets{"whs_test"},
	}, plugin.WithState(voterewards.NewMemoryStore()))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	assert.Eventually(t, func() bool { return strings.Contains(buf.String(), "webhook receiver listening") },
		5*time.Second, 5*time.Millisecond, "the plugin's own line")
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}

// TestUnopenedSessionsAreNamedWithinSeconds: sessions attached but never
// opened are named in a warning 10 s after Run starts (on the plugin's
// clock), instead of minutes of silence; opened ones are not named.
func TestUnopenedSessionsAreNamedWithinSeconds(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{shards: 2})
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var logs logBuffer
	cfg := w.config()
	cfg.VotePollInterval = new(time.Duration(0))
	p := w.plugin(cfg, plugin.WithClock(fake), plugin.WithLogger(logs.Logger()))
	w.start(p)
	w.open(0)
	require.Eventually(t, func() bool { return fake.Timers() > 0 }, wait, tick)
	fake.Advance(9 * time.Second)
	assert.NotContains(t, logs.String(), "not opened")
	fake.Advance(time.Second)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "sessions attached but not opened") }, wait, tick)
	assert.Contains(t, logs.String(), "shards=[1]")
}

// A Plugin not made by New is invalid (DESIGN's zero-value policy): Attach
// panics rather than register READY handlers that block for ever on a nil
// channel, and Run panics rather than return nil having run nothing.
func TestZeroPluginPanics(t *testing.T) {
	t.Parallel()
	s, err := discordgo.New("Bot x")
	require.NoError(t, err)
	for name, p := range map[string]*plugin.Plugin{"zero": {}, "nil": nil} {
		assert.Panics(t, func() { _ = p.Attach(s) }, name)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		assert.Panics(t, func() { _ = p.Run(ctx) }, name)
		cancel()
	}
}

// TestStopGraceCancelsHandlers: a reward handler that runs until its
// context is cancelled holds Run's return for about Config.VoteStopGrace, not the 10 s
// default; the handler sees its context cancelled, and the poller's close
// error reaches the log as a warning instead of vanishing in the supervisor.
func TestStopGraceCancelsHandlers(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	w := newWorld(t, worldSpec{})
	w.tg.AddVote(votes(1)...)
	cfg := w.config()
	cfg.Autopost = "off"
	cfg.SyncCommands = new(false)
	cfg.VoteStopGrace = timeout

	entered := make(chan struct{})
	var once sync.Once
	cancelled := make(chan error, 1)
	stubborn := func(ctx context.Context, _ voterewards.Vote) error {
		once.Do(func() { close(entered) })
		<-ctx.Done()
		select {
		case cancelled <- ctx.Err():
		default:
		}
		return ctx.Err()
	}
	var logs logBuffer
	p := w.plugin(cfg, plugin.WithRewardHandler(stubborn),
		plugin.WithLogger(logs.Logger()))
	w.start(p)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the reward handler was never called")
	}

	start := time.Now()
	require.NoError(t, w.stop(p), "a cancelled handler is not Run's error")
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, timeout, "Close let the handler run for the close timeout")
	// Far below the 10 s default, so this fails if the option is not passed on.
	assert.Less(t, took, timeout+5*time.Second)

	select {
	case err := <-cancelled:
		assert.ErrorIs(t, err, context.Canceled, "the handler saw its context cancelled")
	default:
		t.Fatal("the handler returned without its context being cancelled")
	}
	out := logs.String()
	// voterewards.Poller.Run returns nil after a stop, handlers cancelled or
	// not (the grace period is a promise, not a failure); it says so in the log.
	assert.Contains(t, out, "after the grace period; cancelling them")
}

// TestCleanCloseLogsNoStopError: when the handlers finish in time, stopping
// is not reported as an error.
func TestCleanCloseLogsNoStopError(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	w.tg.AddVote(votes(3)...)
	cfg := w.config()
	rewards := newRecorder()
	var logs logBuffer
	p := w.plugin(cfg, plugin.WithCommands(botCommands()), plugin.WithRewardHandler(rewards.handle),
		plugin.WithLogger(logs.Logger()))
	w.start(p)
	w.open()
	w.requirePublished(botCommands())
	require.Eventually(t, func() bool { return rewards.distinct() == 3 }, wait, tick)
	require.NoError(t, w.stop(p))
	assert.NotContains(t, logs.String(), "job stopped with an error")
}

// releaser is a channel that code ignoring its context blocks on, closed at
// the end of the test (before goleak looks) or earlier.
type releaser struct {
	ch   chan struct{}
	once sync.Once
}

func newReleaser(t *testing.T) *releaser {
	r := &releaser{ch: make(chan struct{})}
	t.Cleanup(r.release)
	return r
}

func (r *releaser) release() { r.once.Do(func() { close(r.ch) }) }

// TestVoteStopGraceHoldsWhenAHandlerIgnoresItsContext: Config.VoteStopGrace
// bounds the stop even when the reward handler never looks at its context:
// Run returns within the grace period plus a second (voterewards waits that long for handlers it cancelled).
func TestVoteStopGraceHoldsWhenAHandlerIgnoresItsContext(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	w := newWorld(t, worldSpec{})
	w.tg.AddVote(votes(1)...)
	cfg := w.config()
	cfg.Autopost = "off"
	cfg.SyncCommands = new(false)
	cfg.VoteStopGrace = grace
	rel := newReleaser(t)
	entered := make(chan struct{}, 1)
	deaf := func(context.Context, voterewards.Vote) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-rel.ch // ignores ctx
		return nil
	}
	var logs logBuffer
	p := w.plugin(cfg, plugin.WithRewardHandler(deaf), plugin.WithLogger(logs.Logger()))
	w.start(p)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the reward handler was never called")
	}
	start := time.Now()
	require.NoError(t, w.stop(p))
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, grace)
	assert.Less(t, took, grace+3*time.Second, "the stop waited for a handler that ignores its context")
	assert.Contains(t, logs.String(), "ignored their cancelled context")
}

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
	testkit.VerifyTestMain(m)
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
