package autopost_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestMain fails the package if a test leaves a goroutine behind.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

const metricsPath = "/v1/projects/@me/metrics"

// setup describes a fixture: a fake Discord with real discordgo sessions, a
// fake Top.gg with a real client, and a Poster between them.
type setup struct {
	shards     int
	perShard   int   // guilds per shard at the start
	open       []int // shards to attach and open; nil: all
	idle       []int // shards to attach but not open
	syncEvents bool
	cfg        autopost.Config
	retry      *topgg.RetryPolicy // default: fast retries, 429s not waited out by the client
	dcOpts     []discordtest.Option
	tgOpts     []topggtest.Option
	// faults are injected into the fake Top.gg before the Poster runs, so
	// that its first post meets them.
	faults []topggtest.Fault
	// clock, if set, times the Poster's waits: the test advances it.
	clock *clock.Fake
}

type fixture struct {
	t        *testing.T
	dc       *discordtest.Server
	tg       *topggtest.Server
	client   *topgg.Client
	sessions map[int]*discordgo.Session
	poster   *autopost.Poster
	detach   map[int]func()
	shards   int
	clock    *clock.Fake // nil: the real clock
	interval time.Duration
	stop     func() // ends Run and waits for it

	mu      sync.Mutex
	results []autopost.Result
}

// newFixture starts the servers, attaches and opens the sessions, and
// starts the Poster. Everything is stopped and closed by t.Cleanup.
func newFixture(t *testing.T, s setup) *fixture {
	t.Helper()
	if s.shards == 0 {
		s.shards = 1
	}
	if s.open == nil {
		for i := range s.shards {
			s.open = append(s.open, i)
		}
	}
	dc := testkit.Discord(t, slices.Repeat([]int{s.perShard}, s.shards), s.dcOpts...)
	tg, err := topggtest.NewServer(s.tgOpts...)
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	for _, fault := range s.faults {
		require.NoError(t, tg.Inject(fault))
	}

	retry := topgg.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}
	if s.retry != nil {
		retry = *s.retry
	}
	client, err := tg.NewClient(topgg.WithRetryPolicy(retry))
	require.NoError(t, err)

	f := &fixture{t: t, dc: dc, tg: tg, client: client, sessions: map[int]*discordgo.Session{},
		detach: map[int]func(){}, shards: s.shards}
	cfg := s.cfg
	if cfg.Interval == 0 {
		cfg.Interval = 20 * time.Millisecond
		if s.clock != nil {
			cfg.Interval = time.Minute
		}
	}
	f.clock, f.interval = s.clock, cfg.Interval
	if s.clock != nil {
		cfg = autopost.WithClock(cfg, s.clock)
	}
	user := cfg.OnPost
	cfg.OnPost = func(r autopost.Result) {
		f.mu.Lock()
		f.results = append(f.results, r)
		f.mu.Unlock()
		if user != nil {
			user(r)
		}
	}
	f.poster, err = autopost.New(client, cfg)
	require.NoError(t, err)

	for _, id := range slices.Concat(s.open, s.idle) {
		sess, err := dc.NewSession(id, s.shards)
		require.NoError(t, err)
		sess.SyncEvents = s.syncEvents
		f.sessions[id] = sess
		f.detach[id], err = f.poster.Attach(sess)
		require.NoError(t, err)
	}
	t.Cleanup(f.closeSessions)
	f.stop = f.run()
	t.Cleanup(f.stop)
	for _, id := range s.open {
		require.NoError(t, f.sessions[id].Open())
	}
	return f
}

// attach attaches a new session of shard to the Poster and opens it.
func (f *fixture) attach(shard int) {
	f.t.Helper()
	sess, err := f.dc.NewSession(shard, f.shards)
	require.NoError(f.t, err)
	f.detach[shard], err = f.poster.Attach(sess)
	require.NoError(f.t, err)
	f.sessions[shard] = sess
	require.NoError(f.t, sess.Open())
}

// run starts Run in a goroutine and returns the function that ends it and
// waits until it returned (once; later calls do nothing).
func (f *fixture) run() func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.poster.Run(ctx) }()
	return sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(f.t, err, "Run")
		case <-time.After(5 * time.Second):
			f.t.Error("Run did not return within 5 s of its context's end")
		}
	})
}

// tick waits until the Poster waits on the fake clock, then advances it by
// d.
func (f *fixture) tick(d time.Duration) {
	f.t.Helper()
	require.Eventually(f.t, func() bool { return f.clock.Timers() > 0 }, 5*time.Second, time.Millisecond,
		"the Poster never waited on the clock")
	f.clock.Advance(d)
}

// closeSessions closes the sessions in parallel: discordgo's Close sleeps a
// second.
func (f *fixture) closeSessions() {
	var wg sync.WaitGroup
	for _, s := range f.sessions {
		wg.Go(func() { _ = s.Close() })
	}
	httpx.Within("the sessions' Close", wg.Wait)
}

func (f *fixture) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	f.t.Cleanup(cancel)
	return ctx
}

// patches returns the metrics posted with PATCH, in order.
func (f *fixture) patches() []topggtest.MetricsRecord {
	var out []topggtest.MetricsRecord
	for _, m := range f.tg.Metrics() {
		if !m.Batch {
			out = append(out, m)
		}
	}
	return out
}

// waitPosted waits until the last PATCH carries servers.
func (f *fixture) waitPosted(servers int) {
	f.t.Helper()
	require.Eventually(f.t, func() bool {
		p := f.patches()
		return len(p) > 0 && p[len(p)-1].Metrics["server_count"] == servers
	}, 5*time.Second, 5*time.Millisecond, "server_count %d never posted; posted: %v", servers, f.patches())
	p := f.patches()
	require.Equal(f.t, f.shards, p[len(p)-1].Metrics["shard_count"])
}

func (f *fixture) resultsCopy() []autopost.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]autopost.Result(nil), f.results...)
}

func (f *fixture) requests(method, path string) []topggtest.Request {
	var out []topggtest.Request
	for _, r := range f.tg.Requests() {
		if (method == "" || r.Method == method) && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// guild returns the n-th guild id of a shard of the fixture.
func (f *fixture) guild(n, shard int) string { return discordtest.GuildIDForShard(n, shard, f.shards) }

// syncBuffer collects the log lines the code under test writes from its goroutines.
type syncBuffer = testlog.Buffer

// newTextLogger logs text lines without the time.
func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// counts reads the Poster's Counter.
func (f *fixture) counts() autopost.Counts {
	f.t.Helper()
	c, err := autopost.CounterOf(f.poster).Counts(f.ctx())
	require.NoError(f.t, err)
	return c
}

func newClock() *clock.Fake { return clock.NewFake(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) }

// skipped reports whether r sent nothing without failing.
func skipped(r autopost.Result) bool {
	return r.Outcome == autopost.OutcomeUnchanged || r.Outcome == autopost.OutcomeIncomplete
}

// skippedSince counts the skipped Results from index from on.
func (f *fixture) skippedSince(from int) int {
	n := 0
	for _, r := range f.resultsCopy()[from:] {
		if skipped(r) {
			n++
		}
	}
	return n
}
