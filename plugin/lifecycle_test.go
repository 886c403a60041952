package plugin_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/clock"
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
			if r.Skipped && len(r.Missing) > 0 {
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
