package commands_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// outcome is one OnResult call.
type outcome struct {
	res commands.Result
	err error
}

// jobRun runs a Syncer's Run on a fake clock and records its outcomes.
type jobRun struct {
	t     *testing.T
	clock *clock.Fake
	job   *commands.Syncer

	mu       sync.Mutex
	outcomes []outcome
	stop     func() error
}

func startJob(t *testing.T, c *topgg.Client, cfg commands.Config) *jobRun {
	t.Helper()
	r := &jobRun{t: t, clock: clock.NewFake(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))}
	cfg.OnResult = func(_ context.Context, res commands.Result, err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.outcomes = append(r.outcomes, outcome{res, err})
	}
	r.job = newSyncer(t, c, commands.WithClock(cfg, r.clock))
	r.stop = r.run()
	t.Cleanup(func() { _ = r.stop() })
	return r
}

// run starts Run and returns the function that ends it and returns its
// error (once; later calls return nil).
func (r *jobRun) run() func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.job.Run(ctx) }()
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				r.t.Error("Run did not return within 5 s of its context's end")
			}
		})
		return err
	}
}

func (r *jobRun) got() []outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]outcome(nil), r.outcomes...)
}

// waitOutcomes waits until n outcomes were reported and returns them.
func (r *jobRun) waitOutcomes(n int) []outcome {
	r.t.Helper()
	require.Eventually(r.t, func() bool { return len(r.got()) >= n }, 5*time.Second, time.Millisecond,
		"waiting for %d outcomes", n)
	return r.got()
}

// advance waits until Run sleeps on the clock, then moves it by d.
func (r *jobRun) advance(d time.Duration) {
	r.t.Helper()
	require.Eventually(r.t, func() bool { return r.clock.Timers() == 1 }, 5*time.Second, time.Millisecond)
	r.clock.Advance(d)
}

// TestJobSyncsAtStartAndEachInterval: the given commands are published when
// Run starts, checked again each interval (unchanged: nothing sent), and Run
// ends cleanly, refuses a concurrent Run, and can run again.
func TestJobSyncsAtStartAndEachInterval(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	r := startJob(t, c, commands.Config{Commands: botCommands()})
	first := r.waitOutcomes(1)[0]
	require.NoError(t, first.err)
	assert.Equal(t, commands.OutcomePublished, first.res.Outcome)
	assert.Len(t, putBodies(srv), 1)
	assert.ErrorIs(t, r.job.Run(t.Context()), topgg.ErrRunning)

	r.advance(commands.DefaultInterval)
	second := r.waitOutcomes(2)[1]
	require.NoError(t, second.err)
	assert.Equal(t, commands.OutcomeUnchanged, second.res.Outcome)
	assert.Len(t, putBodies(srv), 1)

	require.NoError(t, r.stop())
	r.stop = r.run() // again, as a fleet does on each lease it wins
	r.waitOutcomes(3)
	require.NoError(t, r.stop())
}

// TestJobRetriesWhatMayPassAndNotWhatCannot: a 5xx is retried with backoff
// until it passes; a 429 waits its Retry-After; a 422 is reported once and
// the same definitions are never sent again.
func TestJobRetriesWhatMayPassAndNotWhatCannot(t *testing.T) {
	t.Parallel()
	t.Run("5xx", func(t *testing.T) {
		t.Parallel()
		srv, c := newService(t)
		require.NoError(t, srv.Inject(topggtest.Fault{Method: http.MethodPut, Path: commandsPath, Status: http.StatusServiceUnavailable, Times: 3}))
		r := startJob(t, c, commands.Config{Commands: botCommands()})
		failed := r.waitOutcomes(1)[0]
		assert.True(t, topgg.Retryable(failed.err))
		r.advance(5 * time.Second) // the first backoff: at most 5 s
		require.NoError(t, r.waitOutcomes(2)[1].err)
		assert.Len(t, putBodies(srv), 4)
	})
	t.Run("429", func(t *testing.T) {
		t.Parallel()
		srv, c := newService(t)
		require.NoError(t, srv.Inject(topggtest.Fault{Method: http.MethodPut, Path: commandsPath, RetryAfter: time.Hour}))
		r := startJob(t, c, commands.Config{Commands: botCommands()})
		var rl *topgg.RateLimitError
		require.ErrorAs(t, r.waitOutcomes(1)[0].err, &rl)
		r.advance(59 * time.Minute)
		assert.Never(t, func() bool { return len(r.got()) > 1 }, 50*time.Millisecond, 5*time.Millisecond,
			"a sync before Retry-After passed")
	})
	t.Run("422", func(t *testing.T) {
		t.Parallel()
		srv, c := newService(t)
		require.NoError(t, srv.Inject(topggtest.Fault{Method: http.MethodPut, Path: commandsPath, Status: http.StatusUnprocessableEntity}))
		r := startJob(t, c, commands.Config{Commands: botCommands()})
		refused := r.waitOutcomes(1)[0]
		var ae *topgg.APIError
		require.ErrorAs(t, refused.err, &ae)
		assert.Equal(t, http.StatusUnprocessableEntity, ae.StatusCode)
		for range 3 {
			r.advance(commands.DefaultInterval)
		}
		r.advance(0) // the job is asleep again after its third check
		assert.Len(t, putBodies(srv), 1, "refused definitions are not sent again")
		assert.Len(t, r.got(), 1, "the refusal is reported once")
	})
}

// TestJobFromDiscordWaitsForReadyAndFollowsChanges: with a session, Run
// waits for READY, publishes the application's commands, and publishes
// again when the bot registers new ones.
func TestJobFromDiscordWaitsForReadyAndFollowsChanges(t *testing.T) {
	t.Parallel()
	_, session := newDiscord(t)
	srv, c := newService(t)
	r := startJob(t, c, commands.Config{Session: session})

	assert.Never(t, func() bool { return len(r.got()) > 0 }, 50*time.Millisecond, 5*time.Millisecond, "no sync before READY")
	require.NoError(t, session.Open())
	t.Cleanup(func() { assert.NoError(t, session.Close()) })
	first := r.waitOutcomes(1)[0]
	require.NoError(t, first.err)
	assert.Equal(t, 0, first.res.Commands)

	_, err := session.ApplicationCommandCreate(testAppID, "", &discordgo.ApplicationCommand{Name: "vote", Description: "Vote"})
	require.NoError(t, err)
	r.advance(commands.DefaultInterval)
	second := r.waitOutcomes(2)[1]
	require.NoError(t, second.err)
	assert.Equal(t, 1, second.res.Commands)
	assert.Len(t, putBodies(srv), 2)
}

// TestJobFromDiscordWaitsOutADiscord429OnItsClock: a 429 on the read of
// Discord's commands is reported at once, retryable, and the next read waits
// its retry_after on the job's clock (discordgo's own wait ignored Run's end).
func TestJobFromDiscordWaitsOutADiscord429OnItsClock(t *testing.T) {
	t.Parallel()
	dsrv, session := newDiscord(t)
	require.NoError(t, dsrv.Inject(discordtest.Fault{Method: http.MethodGet, Path: "/applications/*", RetryAfter: time.Hour}))
	_, c := newService(t)
	r := startJob(t, c, commands.Config{Session: session})
	require.NoError(t, session.Open())
	t.Cleanup(func() { assert.NoError(t, session.Close()) })

	var rl *discordgo.RateLimitError
	require.ErrorAs(t, r.waitOutcomes(1)[0].err, &rl)
	r.advance(59 * time.Minute)
	assert.Never(t, func() bool { return len(r.got()) > 1 }, 50*time.Millisecond, 5*time.Millisecond,
		"a read before retry_after passed")
	assert.Equal(t, 1, commandFetches(dsrv))
	require.NoError(t, r.stop())
}

// TestJobFromDiscordNamesDiscordsRefusal: a read of the commands Discord
// refuses (403) is logged as Discord's refusal, read again the next
// interval, not as Top.gg's refusal of definitions never sent again; a
// token the answer quotes is in neither the log nor the error.
func TestJobFromDiscordNamesDiscordsRefusal(t *testing.T) {
	t.Parallel()
	dsrv, session := newDiscord(t)
	require.NoError(t, dsrv.Inject(discordtest.Fault{Method: http.MethodGet, Path: "/applications/*", Status: http.StatusForbidden,
		Body: `{"message": "Missing Access for {{authorization}}", "code": 50001}`})) // a proxy echoing the token
	_, c := newService(t)
	var logs logBuffer
	r := startJob(t, c, commands.Config{Session: session, Logger: newLogger(&logs)})
	require.NoError(t, session.Open())
	t.Cleanup(func() { assert.NoError(t, session.Close()) })

	refused := r.waitOutcomes(1)[0].err
	require.ErrorContains(t, refused, "Missing Access")
	assert.NotContains(t, refused.Error()+logs.String(), dsrv.Token())
	assert.Contains(t, logs.String(), `level=ERROR msg="Discord refused the read of the application's commands; reading them again next interval"`)
	assert.NotContains(t, logs.String(), "Top.gg refused")
	r.advance(commands.DefaultInterval)
	require.NoError(t, r.waitOutcomes(2)[1].err)
	assert.Equal(t, 2, commandFetches(dsrv))
}

// TestJobNamesASessionNeverOpened: a Session never opened kept Run waiting
// for its READY without a word; after discord.OpenGrace it is one warning
// naming the shard, and Run still syncs once the session opens.
func TestJobNamesASessionNeverOpened(t *testing.T) {
	t.Parallel()
	_, session := newDiscord(t)
	_, c := newService(t)
	var logs logBuffer
	r := startJob(t, c, commands.Config{Session: session, Logger: newLogger(&logs)})
	r.advance(discord.OpenGrace)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "sessions attached but not opened") },
		5*time.Second, time.Millisecond, "no warning of the unopened session")
	assert.Contains(t, logs.String(), "level=WARN")
	require.NoError(t, session.Open())
	t.Cleanup(func() { assert.NoError(t, session.Close()) })
	require.NoError(t, r.waitOutcomes(1)[0].err)
}

// TestJobWaitsForReadyThenPublishesCommands: with Ready beside Commands, the
// first publish waits until Ready returns; a Ready ended by the context ends
// Run with nil.
func TestJobWaitsForReadyThenPublishesCommands(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	ready := make(chan struct{})
	r := startJob(t, c, commands.Config{
		Commands: botCommands(),
		Ready: func(ctx context.Context) (*discordgo.Session, error) {
			select {
			case <-ready:
				return &discordgo.Session{}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	})
	assert.Never(t, func() bool { return len(r.got()) > 0 }, 50*time.Millisecond, 5*time.Millisecond, "no sync before READY")
	close(ready)
	require.NoError(t, r.waitOutcomes(1)[0].err)
	assert.Len(t, putBodies(srv), 1)
	require.NoError(t, r.stop())
}

// TestJobEndsWithReadysError: a Ready that fails (or gives no session)
// ended Run with nil, the job gone without a word; Run returns its error.
func TestJobEndsWithReadysError(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	refused := errors.New("gateway closed: 4014 disallowed intents")
	for _, ready := range []func(context.Context) (*discordgo.Session, error){
		func(context.Context) (*discordgo.Session, error) { return nil, refused },
		func(context.Context) (*discordgo.Session, error) { return nil, nil },
	} {
		job := newSyncer(t, c, commands.Config{Commands: botCommands(), Ready: ready})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := job.Run(ctx)
		cancel()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "commands: Config.Ready")
	}
	require.ErrorIs(t, newSyncer(t, c, commands.Config{Ready: func(context.Context) (*discordgo.Session, error) { return nil, refused }}).
		Run(context.Background()), refused)
	assert.Empty(t, putBodies(srv))
}

// TestJobEndsOnRefusedToken: a refused token is reported once and ends Run
// with an error wrapping topgg.ErrUnauthorized, for a supervisor to stop.
func TestJobEndsOnRefusedToken(t *testing.T) {
	t.Parallel()
	srv, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	bad, err := topgg.New("not-the-token", topgg.WithBaseURL(srv.URL), topgg.WithHTTPClient(srv.Client()),
		topgg.WithRetryPolicy(fastRetries()))
	require.NoError(t, err)
	var got []error
	job := newSyncer(t, bad, commands.Config{
		Commands: botCommands(),
		OnResult: func(_ context.Context, _ commands.Result, err error) { got = append(got, err) },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = job.Run(ctx)
	require.ErrorIs(t, err, topgg.ErrUnauthorized)
	assert.NotContains(t, err.Error(), "not-the-token")
	require.Len(t, got, 1)
	assert.ErrorIs(t, got[0], topgg.ErrUnauthorized)
}

// TestMisuseFailsFast: nil clients, stores and sessions are errors, a zero
// Syncer panics: never a hang.
func TestMisuseFailsFast(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	var zero commands.Syncer
	assert.Panics(t, func() { _, _ = zero.Sync(ctx, botCommands()) }, "a zero Syncer would wait for ctx")

	_, err := commands.New(nil, commands.Config{})
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	_, c := newService(t)
	var nilMemory *commands.MemoryHashStore
	_, err = commands.New(c, commands.Config{Store: nilMemory})
	require.ErrorIs(t, err, topgg.ErrNilArgument)

	requireConfigError(t, newSyncer(t, c, commands.Config{}).Run(ctx), "commands.Config.Session")
	_, err = commands.New(c, commands.Config{Commands: botCommands(), Session: &discordgo.Session{}})
	requireConfigError(t, err, "commands.Config.Session")
	ready := func(context.Context) (*discordgo.Session, error) { return nil, nil }
	_, err = commands.New(c, commands.Config{Ready: ready, Session: &discordgo.Session{}})
	requireConfigError(t, err, "commands.Config.Session")
	var verr *topgg.ValidationError
	_, err = commands.New(c, commands.Config{Commands: []*discordgo.ApplicationCommand{{Name: "Vote", Description: "d"}}})
	require.ErrorAs(t, err, &verr)

	// The interval floor protects the real service; a fake on this machine has none.
	remote, err := topgg.New("token")
	require.NoError(t, err)
	_, err = commands.New(remote, commands.Config{Commands: botCommands(), Interval: time.Second})
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "commands.Config.Interval", ce.Field)
	require.ErrorContains(t, err, "commands.Config.Interval: 1s is below 1m0s")
	_, err = commands.New(remote, commands.Config{Commands: botCommands(), Interval: -time.Second})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "commands.Config.Interval: must not be negative", err.Error())
	_, err = commands.New(remote, commands.Config{Commands: botCommands(), Interval: commands.MinInterval})
	require.NoError(t, err)
	_, err = commands.New(c, commands.Config{Commands: botCommands(), Interval: time.Millisecond})
	require.NoError(t, err, "the test's client is of a fake on this machine")
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	for o, want := range map[commands.Outcome]string{commands.OutcomePublished: "published", commands.OutcomeUnchanged: "unchanged",
		commands.OutcomeSkipped: "skipped", commands.OutcomeFailed: "failed", 0: "unknown", 9: "unknown"} {
		require.Equal(t, want, o.String())
	}
}

// TestOnResultPanicIsContained: an OnResult that panics at every call
// neither ends Run nor changes what Run does (one publish, then an
// unchanged check each interval); the log names the callback, without a
// stack.
func TestOnResultPanicIsContained(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	var logs testlog.Buffer
	var calls atomic.Int32
	clk := clock.NewFake(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	cfg := commands.Config{Logger: logs.Logger(), Commands: botCommands(), OnResult: func(context.Context, commands.Result, error) {
		calls.Add(1)
		panic("dashboard bug")
	}}
	job := newSyncer(t, c, commands.WithClock(cfg, clk))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- job.Run(ctx) }()
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return clk.Timers() == 1 }, 5*time.Second, time.Millisecond, "Run goes on to its next interval")
	clk.Advance(commands.DefaultInterval)
	require.Eventually(t, func() bool { return calls.Load() == 2 }, 5*time.Second, time.Millisecond)
	assert.Len(t, putBodies(srv), 1)
	cancel()
	require.NoError(t, testkit.Recv(t, done, "Run did not return"))
	assert.Equal(t, 2, strings.Count(logs.String(), "OnResult panicked"))
	assert.Contains(t, logs.String(), "dashboard bug")
	assert.Equal(t, 1, strings.Count(logs.String(), "[running]"), "the stack, once")
}

// TestPrintedJobHoldsNoBotToken: a Config or Syncer with a Session, printed
// under any verb or logged, does not show the session's bot token (fmt prints
// a *discordgo.Session reached under %s, %q, %d or %x in full).
func TestPrintedJobHoldsNoBotToken(t *testing.T) {
	t.Parallel()
	const botToken = "MTIzNDU2Nzg5MDEyMzQ1Njc4.BOTSEKRIT.token"
	s, err := discordgo.New("Bot " + botToken)
	require.NoError(t, err)
	_, c := newService(t)
	cfg := commands.Config{Session: s}
	job := newSyncer(t, c, cfg)

	out := testlog.PrintAll(cfg, &cfg, job, []any{cfg}, struct{ J *commands.Syncer }{job})
	require.NotContains(t, out, "SEKRIT")
	require.NotContains(t, out, fmt.Sprintf("%x", "BOTSEKRIT"))
	require.NotContains(t, out, fmt.Sprintf("%X", "BOTSEKRIT"))
	require.NotContains(t, out, "!ERROR", "slog prints them through LogValue")
	require.Contains(t, out, "commands.Config{store: false, commands: 0, session: shard 0, ready: false, interval: 0s}")
}

// TestJobReadsAndPublishesNothingOnceItsTermIsOver: a fleet leader's Run
// syncs from Discord while its term is valid; once the term's deadline has
// passed (the clock jumps past it, as after a pause, and nothing has
// cancelled Run's context), the next sync neither reads Discord's
// commands nor publishes, nothing is reported, and Run returns (the failed
// check ended the term and cancelled its context).
func TestJobReadsAndPublishesNothingOnceItsTermIsOver(t *testing.T) {
	t.Parallel()
	dsrv, session := newDiscord(t)
	srv, c := newService(t)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	results := make(chan error, 10)
	job := newSyncer(t, c, commands.WithClock(commands.Config{Session: session,
		OnResult: func(_ context.Context, _ commands.Result, err error) { results <- err }}, clk))
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	tm := clock.NewTerm(clk, start.Add(commands.DefaultInterval), cancel)
	done := make(chan error, 1)
	go func() { done <- job.Run(clock.WithTerm(ctx, tm)) }()
	require.NoError(t, session.Open())
	t.Cleanup(func() { assert.NoError(t, session.Close()) })

	require.NoError(t, testkit.Recv(t, results, "no sync within the term"), "the sync within the term")
	reads := discordReads(dsrv)
	require.Positive(t, reads)
	require.Eventually(t, func() bool { return clk.Timers() == 1 }, 5*time.Second, time.Millisecond)
	clk.Advance(commands.DefaultInterval) // the next sync is due, and the term's deadline passed
	require.NoError(t, testkit.Recv(t, done, "Run went on after its term was over"))
	assert.Equal(t, reads, discordReads(dsrv), "Discord's commands were read after the term's deadline")
	assert.Len(t, putBodies(srv), 1, "published after the term's deadline")
	assert.Empty(t, results, "a sync was reported after the term's deadline")
}

// discordReads counts the reads of the application's commands on Discord.
func discordReads(dsrv *discordtest.Server) int {
	n := 0
	for _, c := range dsrv.Requests() {
		if c.Method == http.MethodGet && strings.HasSuffix(c.Path, "/commands") {
			n++
		}
	}
	return n
}

// TestReadyPanicIsContained: a Ready that panics ended the process (it runs
// on Run's goroutine); Run returns without a sync, and the panic is logged
// with its stack.
func TestReadyPanicIsContained(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	var logs testlog.Buffer
	job := newSyncer(t, c, commands.Config{Logger: logs.Logger(), Commands: botCommands(),
		Ready: func(context.Context) (*discordgo.Session, error) { panic("sharding bug") }})
	require.NoError(t, job.Run(context.Background()))
	assert.Empty(t, putBodies(srv))
	assert.Contains(t, logs.String(), "sharding bug")
	assert.Contains(t, logs.String(), "goroutine ", "the stack is logged")
}

// TestSyncerPrintsByName: fmt of a Syncer walked its client and hash store;
// under every verb it prints its name alone.
func TestSyncerPrintsByName(t *testing.T) {
	t.Parallel()
	_, c := newService(t)
	for _, s := range []*commands.Syncer{newSyncer(t, c, commands.Config{}), nil, {}} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			require.Equal(t, "commands.Syncer", fmt.Sprintf(verb, s), verb)
		}
	}
}
