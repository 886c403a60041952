package autopost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
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
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// The Poster: when it posts, what it reports, and that Run leaves nothing
// behind. The timing tests advance a fake clock instead of sleeping through
// intervals.

// TestFirstPostWaitsForEveryShard: nothing is posted before the last shard
// has its READY. At ReadyTimeout the missing shard is named in a warning and
// a skipped Result, and the Poster waits on: a partial total is never posted.
func TestFirstPostWaitsForEveryShard(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	f := newFixture(t, setup{shards: 3, perShard: 2, open: []int{0, 1}, idle: []int{2}, clock: newClock(),
		cfg: autopost.Config{ReadyTimeout: time.Hour, Logger: newTextLogger(&buf)}})
	require.Eventually(t, func() bool { return f.counts().Servers == 4 }, 5*time.Second, 5*time.Millisecond)
	f.tick(time.Hour)
	require.Eventually(t, func() bool { return len(f.resultsCopy()) > 0 }, 5*time.Second, time.Millisecond)
	r := f.resultsCopy()[0]
	assert.Equal(t, autopost.OutcomeIncomplete, r.Outcome)
	assert.Equal(t, []int{2}, r.Missing)
	assert.Equal(t, 4, r.Servers)
	assert.Empty(t, f.tg.Requests(), "no partial total")
	assert.Contains(t, buf.String(), `msg="not every shard has reported yet; the first post waits for them" component=autopost missing=[2] shards=3 waited=1h0m0s`)
	// Its session was attached but never opened: the warning names it
	// (after 10 s, here within the hour the clock moved).
	assert.Contains(t, buf.String(), `msg="sessions attached but not opened: no READY, so nothing is counted or published for their shards until Open is called on them" component=autopost shards=[2] waited=10s`)
	assert.False(t, f.counts().Complete())

	require.NoError(t, f.sessions[2].Open())
	f.waitPosted(6)
	assert.Equal(t, 6, f.patches()[0].Metrics["server_count"], "the first post has every shard")
}

// TestSkipsUnchangedAndRefreshes: unchanged numbers are not posted again
// until Refresh has passed; a change is posted at the next interval.
func TestSkipsUnchangedAndRefreshes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{perShard: 2, clock: newClock(), cfg: autopost.Config{Refresh: 3 * time.Minute}})
	f.waitPosted(2)
	for i := 1; i <= 2; i++ {
		f.tick(f.interval)
		require.Eventually(t, func() bool { return f.skippedSince(0) == i }, 5*time.Second, time.Millisecond)
	}
	require.Len(t, f.patches(), 1, "unchanged numbers skipped")
	for _, r := range f.resultsCopy()[1:] {
		assert.NoError(t, r.Err)
		assert.Equal(t, 2, r.Servers)
	}
	f.tick(f.interval) // Refresh has passed: posted again
	require.Eventually(t, func() bool { return len(f.patches()) == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 2, f.patches()[1].Metrics["server_count"])
	require.Eventually(t, func() bool { return len(f.resultsCopy()) == 4 }, 5*time.Second, time.Millisecond)
	res := f.resultsCopy()
	assert.False(t, skipped(res[3]))
	assert.Equal(t, 3*time.Minute, res[3].At.Sub(res[0].At))

	require.NoError(t, f.dc.Join(f.ctx(), f.guild(50, 0)))
	require.Eventually(t, func() bool { return f.counts().Servers == 3 }, 5*time.Second, time.Millisecond)
	f.tick(f.interval)
	f.waitPosted(3)
}

// TestHonoursRetryAfter: after a 429 the next attempt waits the service's
// Retry-After (an hour here, far beyond the backoff after a failure), on the
// Poster's clock.
func TestHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	// The client hands every 429 to the Poster instead of waiting it out.
	retry := topgg.RetryPolicy{MaxAttempts: 1}
	f := newFixture(t, setup{perShard: 2, retry: &retry, clock: newClock()})
	f.waitPosted(2)
	require.NoError(t, f.tg.Inject(topggtest.Fault{Method: http.MethodPatch, Path: metricsPath, RetryAfter: time.Hour}))
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(50, 0)))
	require.Eventually(t, func() bool { return f.counts().Servers == 3 }, 5*time.Second, time.Millisecond)
	f.tick(f.interval)
	require.Eventually(t, func() bool { return len(f.resultsCopy()) == 2 }, 5*time.Second, time.Millisecond)
	limited := f.resultsCopy()[1]
	var rl *topgg.RateLimitError
	require.ErrorAs(t, limited.Err, &rl)
	assert.Equal(t, time.Hour, rl.RetryAfter)
	assert.Equal(t, time.Hour, limited.RetryIn)

	f.tick(59 * time.Minute) // more than any backoff, less than Retry-After
	assert.Never(t, func() bool { return len(f.resultsCopy()) > 2 }, 50*time.Millisecond, 5*time.Millisecond,
		"an attempt before Retry-After passed")
	assert.Len(t, f.requests(http.MethodPatch, metricsPath), 2)
}

// TestBackfillAfterOutage: while Top.gg is unreachable (dropped connections,
// then 503s) the Poster keeps one sample per interval; when it is back they
// go in one batch, in timestamp order, then the current numbers.
//
// gocyclo 16: one outage told in order (drops, 503s, recovery), with the
// checks of each phase where it happens.
func TestBackfillAfterOutage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{perShard: 2, clock: newClock()})
	f.waitPosted(2)

	require.NoError(t, f.tg.Inject(topggtest.Fault{Path: metricsPath + "*", Drop: true, Times: 6}))
	require.NoError(t, f.tg.Inject(topggtest.Fault{Path: metricsPath + "*", Status: http.StatusServiceUnavailable, Times: 14}))
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(50, 0))) // 3: the first failed post
	require.Eventually(t, func() bool { return f.counts().Servers == 3 }, 5*time.Second, time.Millisecond)
	for f.tg.PendingFaults() >= 10 {
		f.tick(f.interval)
	}
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(51, 0))) // 4: posted during the outage
	require.Eventually(t, func() bool { return f.counts().Servers == 4 }, 5*time.Second, time.Millisecond)
	for !slices.ContainsFunc(f.patches(), func(m topggtest.MetricsRecord) bool { return m.Metrics["server_count"] == 4 }) {
		f.tick(f.interval)
	}

	var batch []topggtest.MetricsRecord
	for _, m := range f.tg.Metrics() {
		if m.Batch {
			batch = append(batch, m)
		}
	}
	require.GreaterOrEqual(t, len(batch), 2, "an outage of several intervals")
	assert.Equal(t, 3, batch[0].Metrics["server_count"], "the first missed post")
	for i, m := range batch {
		assert.Equal(t, 1, m.Metrics["shard_count"])
		assert.Contains(t, []int{3, 4}, m.Metrics["server_count"])
		if i > 0 {
			assert.Equal(t, f.interval, m.Timestamp.Sub(batch[i-1].Timestamp), "one sample per interval, ascending")
			assert.GreaterOrEqual(t, m.Metrics["server_count"], batch[i-1].Metrics["server_count"])
		}
	}

	// One batch request got through, before the PATCH with the current numbers.
	type sample struct {
		Timestamp time.Time      `json:"timestamp"`
		Metrics   map[string]int `json:"metrics"`
	}
	var batchAt, patchAt int
	for i, r := range f.tg.Requests() {
		if r.Path == metricsPath+"/batch" {
			var body struct{ Data []sample }
			require.NoError(t, json.Unmarshal(r.Body, &body))
			assert.True(t, slices.IsSortedFunc(body.Data, func(a, b sample) int { return a.Timestamp.Compare(b.Timestamp) }),
				"batch sent in timestamp order")
			batchAt = i
		}
		if r.Method == http.MethodPatch && r.Path == metricsPath {
			patchAt = i
		}
	}
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(f.resultsCopy(), func(r autopost.Result) bool { return r.Backfilled > 0 })
	}, 5*time.Second, time.Millisecond)
	var okBatches, unreachable int
	for _, r := range f.resultsCopy() {
		if r.Backfilled > 0 {
			okBatches++
			assert.Equal(t, len(batch), r.Backfilled)
			assert.NoError(t, r.Err)
		}
		var re *topgg.RequestError
		var ae *topgg.APIError
		if errors.As(r.Err, &re) || (errors.As(r.Err, &ae) && ae.StatusCode == http.StatusServiceUnavailable) {
			unreachable++
		}
	}
	assert.Equal(t, 1, okBatches)
	assert.Less(t, batchAt, patchAt, "the batch goes before the current numbers")
	assert.Positive(t, unreachable)
}

// fixedSource returns complete counts.
type fixedSource struct{}

func (fixedSource) Counts(context.Context) (autopost.Counts, error) {
	return autopost.Counts{Servers: 7, Shards: 1, PerShard: []int{7}}, nil
}

func (fixedSource) Changed() <-chan struct{} { return nil }

// TestPosterPostsNothingOnceItsTermIsOver: a fleet leader's Poster posts
// while its term is valid; when the term's deadline passes after that post
// (a pause, with nothing cancelled), the next post, due at once, is not
// sent nor reported, and Run returns (the failed check ended the term and
// cancelled its context).
func TestPosterPostsNothingOnceItsTermIsOver(t *testing.T) {
	t.Parallel()
	tg, client := testkit.Service(t)
	start := time.Unix(1_700_000_000, 0)
	termClock := clock.NewFake(start)
	var results atomic.Int32
	p, err := autopost.New(client, autopost.Config{Source: fixedSource{}, Interval: 10 * time.Millisecond,
		Refresh: 10 * time.Millisecond, OnPost: func(autopost.Result) {
			results.Add(1)
			termClock.Advance(time.Second) // a pause right after the first post
		}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	tm := clock.NewTerm(termClock, start.Add(time.Second), cancel)
	done := make(chan error, 1)
	go func() { done <- p.Run(clock.WithTerm(ctx, tm)) }()
	require.NoError(t, testkit.Recv(t, done, "Run went on after its term was over"))
	assert.Len(t, tg.Metrics(), 1, "posted after the term's deadline")
	assert.Equal(t, int32(1), results.Load(), "the refused post was reported")
	assert.ErrorIs(t, clock.CheckTerm(clock.WithTerm(ctx, tm)), clock.ErrTermOver)
}

// tableSource is a Source whose counts the test sets, the way a fleet's
// aggregator reads them from a shared store: it has no Changed channel.
type tableSource struct {
	mu     sync.Mutex
	counts autopost.Counts
	err    error
	reads  int
}

func (s *tableSource) set(c autopost.Counts, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts, s.err = c, err
}

func (s *tableSource) Counts(ctx context.Context) (autopost.Counts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	return s.counts, s.err
}

func (s *tableSource) Changed() <-chan struct{} { return nil }

func (s *tableSource) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// TestPostsWhatTheSourceGives: with another Source, the first post waits
// until it has every shard (asking again on the clock, since it has no
// Changed channel), an error of the Source is reported and retried, and the
// exact total is posted; v0 posts its per-shard list.
func TestPostsWhatTheSourceGives(t *testing.T) {
	t.Parallel()
	for name, mode := range map[string]autopost.Mode{"v1": autopost.ModeV1, "v0": autopost.ModeV0} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tg, client := testkit.Service(t)
			src := &tableSource{}
			src.set(autopost.Counts{Servers: 5, Shards: 3, PerShard: []int{5, 0, 0}, Missing: []int{1, 2}, BotID: topggtest.DiscordBot().PlatformID}, nil)
			clk := newClock()
			results := make(chan autopost.Result, 100)
			p, err := autopost.New(client, autopost.WithClock(autopost.Config{
				Mode: mode, Source: src, Interval: 16 * time.Minute,
				OnPost: func(r autopost.Result) { results <- r },
			}, clk))
			require.NoError(t, err)
			_, err = p.Attach()
			require.ErrorIs(t, err, autopost.ErrNoCounter)
			assert.Nil(t, autopost.CounterOf(p))

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()
			t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

			// Incomplete: asked again each minute (a sixteenth of the interval).
			waitTimers := func() {
				require.Eventually(t, func() bool { return clk.Timers() == 2 }, 5*time.Second, time.Millisecond)
			}
			waitTimers()
			reads := src.readCount()
			clk.Advance(time.Minute)
			require.Eventually(t, func() bool { return src.readCount() == reads+1 }, 5*time.Second, time.Millisecond)
			src.set(autopost.Counts{}, errors.New("store unreachable"))
			waitTimers()
			clk.Advance(time.Minute)
			waitTimers()
			assert.Empty(t, tg.Requests(), "nothing posted while incomplete or failing")

			src.set(autopost.Counts{Servers: 12, Shards: 3, PerShard: []int{5, 4, 3}, BotID: topggtest.DiscordBot().PlatformID}, nil)
			clk.Advance(time.Minute)
			r := <-results
			require.NoError(t, r.Err)
			assert.Equal(t, 12, r.Servers)
			assert.Equal(t, 3, r.Shards)
			if mode == autopost.ModeV1 {
				require.Len(t, tg.Metrics(), 1)
				assert.Equal(t, map[string]int{"server_count": 12, "shard_count": 3}, tg.Metrics()[0].Metrics)
				return
			}
			reqs := tg.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, http.MethodPost, reqs[0].Method)
			assert.JSONEq(t, `{"server_count":12,"shards":[5,4,3],"shard_count":3}`, string(reqs[0].Body))
		})
	}
}

// TestSourceConfigErrors: a typed nil Source, or a ShardCount beside a
// Source, is a ConfigError naming the field.
func TestSourceConfigErrors(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	var typedNil *tableSource
	_, err = autopost.New(client, autopost.Config{Source: typedNil})
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "autopost.Config.Source", ce.Field)
	_, err = autopost.New(client, autopost.Config{Source: &tableSource{}, ShardCount: 2})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "autopost.Config.ShardCount", ce.Field)
}

// TestOnPostPanicIsRecovered: a panic in OnPost is logged and the Poster
// goes on posting.
func TestOnPostPanicIsRecovered(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	f := newFixture(t, setup{perShard: 2, cfg: autopost.Config{
		Logger: newTextLogger(&buf),
		OnPost: func(autopost.Result) { panic("boom in OnPost") },
	}})
	f.waitPosted(2)
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(30, 0)))
	f.waitPosted(3)
	assert.Contains(t, buf.String(), `level=ERROR msg="OnPost panicked" component=autopost panic="boom in OnPost"`)
	assert.Equal(t, 1, strings.Count(buf.String(), "[running]"), "the stack, once")
}

// TestRefusedTokenLoggedOncePerSpell: while Top.gg refuses the token, each
// attempt is reported to OnPost but only the first is logged above debug
// level; a success ends the spell, and the next refusal is logged again.
func TestRefusedTokenLoggedOncePerSpell(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	// The fault is in place before the Poster runs: injected after, the
	// first post could pass before it (failed 2 in 40 runs).
	f := newFixture(t, setup{perShard: 2, clock: newClock(), cfg: autopost.Config{Logger: newTextLogger(&buf)},
		faults: []topggtest.Fault{{Method: "PATCH", Path: metricsPath, Status: http.StatusUnauthorized, Times: 3}}})
	failedN := func() int {
		n := 0
		for _, r := range f.resultsCopy() {
			if r.Outcome == autopost.OutcomeFailed {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return failedN() == 1 }, 5*time.Second, time.Millisecond)
	for i := 2; i <= 3; i++ {
		f.tick(f.interval)
		require.Eventually(t, func() bool { return failedN() == i }, 5*time.Second, time.Millisecond)
	}
	warn := `level=WARN msg="could not post the server count to Top.gg; will retry"`
	assert.Equal(t, 1, strings.Count(buf.String(), warn), buf.String())
	assert.Equal(t, 2, strings.Count(buf.String(), "the token is still refused"), buf.String())
	for _, r := range f.resultsCopy() {
		if r.Err != nil {
			assert.ErrorIs(t, r.Err, topgg.ErrUnauthorized)
		}
	}

	f.tick(f.interval)
	f.waitPosted(2)
	require.NoError(t, f.tg.Inject(topggtest.Fault{Method: "PATCH", Path: metricsPath, Status: http.StatusUnauthorized}))
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(30, 0))) // a change, so that the next attempt posts
	require.Eventually(t, func() bool { return f.counts().Servers == 3 }, 5*time.Second, time.Millisecond)
	f.tick(f.interval)
	require.Eventually(t, func() bool { return failedN() == 4 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 2, strings.Count(buf.String(), warn), buf.String())
}

// TestOutcomeLabels: each outcome's metrics label.
func TestOutcomeLabels(t *testing.T) {
	t.Parallel()
	for o, label := range map[autopost.Outcome]string{
		autopost.OutcomePosted: "posted", autopost.OutcomeUnchanged: "unchanged",
		autopost.OutcomeIncomplete: "incomplete", autopost.OutcomeFailed: "failed", 0: "unknown", 9: "unknown",
	} {
		assert.Equal(t, label, o.String())
	}
}

// TestRunLeavesNoGoroutine runs alone (not parallel), so that any goroutine
// left after Run returned and the closes is the Poster's. Run is run twice
// in sequence, the way a fleet re-runs its leader's jobs.
func TestRunLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	dc, err := discordtest.NewServer(discordtest.WithGuilds(discordtest.GuildIDForShard(0, 0, 1)))
	require.NoError(t, err)
	defer dc.Close()
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	defer tg.Close()
	client, err := tg.NewClient()
	require.NoError(t, err)
	p, err := autopost.New(client, autopost.Config{Interval: 10 * time.Millisecond, Refresh: 10 * time.Millisecond})
	require.NoError(t, err)
	sess, err := dc.NewSession(0, 1)
	require.NoError(t, err)
	detach, err := p.Attach(sess)
	require.NoError(t, err)
	run := func() (stop func() error) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		return func() error { cancel(); return <-done }
	}
	stop := run()
	require.NoError(t, sess.Open())
	require.Eventually(t, func() bool { return len(tg.Metrics()) > 0 }, 5*time.Second, 5*time.Millisecond)

	// A post held in flight by the server is cancelled when Run's context ends.
	require.NoError(t, tg.Inject(topggtest.Fault{Delay: time.Minute, Times: 1}))
	require.NoError(t, dc.Join(context.Background(), discordtest.GuildIDForShard(1, 0, 1)))
	require.Eventually(t, func() bool { return tg.PendingFaults() == 0 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, stop())

	// Run again: it posts again (a new leader posts at once).
	posted := len(tg.Metrics())
	stop = run()
	require.Eventually(t, func() bool { return len(tg.Metrics()) > posted }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, stop())
	detach()
	require.NoError(t, sess.Close())
}

// TestRunReturnsOnCancel: Run returns nil once its context is done, also
// while it waits for READY.
func TestRunReturnsOnCancel(t *testing.T) {
	client, err := topgg.New("token")
	require.NoError(t, err)
	p, err := autopost.New(client, autopost.Config{})
	require.NoError(t, err)
	dc, err := discordtest.NewServer()
	require.NoError(t, err)
	defer dc.Close()
	sess, err := dc.NewSession(0, 1)
	require.NoError(t, err)
	_, err = p.Attach(sess) // never opened: Run waits for READY
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	assert.Never(t, func() bool { return len(done) > 0 }, 50*time.Millisecond, 10*time.Millisecond,
		"Run waits for READY")
	cancel()
	require.NoError(t, testkit.Recv(t, done, "Run did not return after cancel"))
}

// TestConfigErrorNamesTheField: New rejects an invalid Config with a
// *ConfigError that names the field.
func TestConfigErrorNamesTheField(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	for _, tc := range []struct {
		cfg   autopost.Config
		field string
		msg   string
	}{
		{autopost.Config{Mode: 7}, "autopost.Config.Mode", "autopost.Config.Mode: unknown mode 7"},
		{autopost.Config{Interval: -time.Second}, "autopost.Config.Interval", "autopost.Config.Interval: must not be negative"},
		{autopost.Config{Refresh: -1}, "autopost.Config.Refresh", "autopost.Config.Refresh: must not be negative"},
		{autopost.Config{ReadyTimeout: -1}, "autopost.Config.ReadyTimeout", "autopost.Config.ReadyTimeout: must not be negative"},
		{autopost.Config{ShardCount: -2}, "autopost.Config.ShardCount", "autopost.Config.ShardCount: must not be negative"},
		{autopost.Config{MaxBackfill: 101}, "autopost.Config.MaxBackfill", "autopost.Config.MaxBackfill: 101 is over 100 (one metrics batch)"},
	} {
		_, err := autopost.New(client, tc.cfg)
		var ce *topgg.ConfigError
		require.ErrorAs(t, err, &ce, "%+v", tc.cfg)
		assert.Equal(t, tc.field, ce.Field)
		assert.NotEmpty(t, ce.Problem)
		assert.EqualError(t, err, tc.msg)
	}
}

// TestPrintedCounterHoldsNoBotToken: a Counter or Poster with sessions
// attached, printed under any verb or logged, does not show a session's bot
// token (fmt prints a *discordgo.Session reached under %s, %q, %d or %x in
// full, and the Counter keys its shards by session).
func TestPrintedCounterHoldsNoBotToken(t *testing.T) {
	t.Parallel()
	s, err := discordgo.New("Bot MTIzNDU2Nzg5MDEyMzQ1Njc4.BOTSEKRIT.token")
	require.NoError(t, err)
	c, err := topgg.New("x.y.z")
	require.NoError(t, err)
	p, err := autopost.New(c, autopost.Config{})
	require.NoError(t, err)
	_, err = p.Attach(s)
	require.NoError(t, err)
	counter := autopost.NewCounter(1)
	_, err = counter.Attach(s)
	require.NoError(t, err)

	out := testlog.PrintAll(counter, p, struct{ C *autopost.Counter }{counter})
	require.NotContains(t, out, "SEKRIT")
	require.NotContains(t, out, fmt.Sprintf("%x", "BOTSEKRIT"))
	require.NotContains(t, out, fmt.Sprintf("%X", "BOTSEKRIT"))
	require.Contains(t, out, "autopost.Counter{shard count: 1, sessions attached: 1}")
	require.Equal(t, "autopost.Counter(nil)", fmt.Sprint((*autopost.Counter)(nil)))
}

// TestPrintingThePosterWhileSessionsAttachIsSafe: fmt of a Poster walked its
// Counter unlocked while sessions were attached (a data race, under -race).
func TestPrintingThePosterWhileSessionsAttachIsSafe(t *testing.T) {
	t.Parallel()
	c, err := topgg.New("x.y.z")
	require.NoError(t, err)
	p, err := autopost.New(c, autopost.Config{})
	require.NoError(t, err)
	out := testlog.PrintWhile(func() {
		for range 200 {
			s, err := discordgo.New("Bot MTIzNDU2Nzg5MDEyMzQ1Njc4.BOTSEKRIT.token")
			if !assert.NoError(t, err) {
				return
			}
			if detach, err := p.Attach(s); assert.NoError(t, err) {
				detach()
			}
		}
	}, p)
	require.Contains(t, out, "autopost.Poster")
}

// TestCountsExactOverGuildLifecycle: READY with stubs and lazy GUILD_CREATEs,
// then a join, a removal, an outage and a return; each posted server_count
// is exact, with handlers run out of order (SyncEvents false, discordgo's
// default) and in order.
func TestCountsExactOverGuildLifecycle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		shards int
		sync   bool
	}{{1, false}, {3, false}, {3, true}} {
		t.Run(fmt.Sprintf("shards=%d/sync=%v", tc.shards, tc.sync), func(t *testing.T) {
			t.Parallel()
			const perShard = 4
			f := newFixture(t, setup{shards: tc.shards, perShard: perShard, syncEvents: tc.sync})
			ctx := f.ctx()
			last := tc.shards - 1
			want := tc.shards * perShard
			timeline := []int{want}
			step := func(delta int) {
				t.Helper()
				want += delta
				timeline = append(timeline, want)
				f.waitPosted(want)
			}
			f.waitPosted(want)

			require.NoError(t, f.dc.Join(ctx, f.guild(100, last)))
			step(+1)
			require.NoError(t, f.dc.Remove(ctx, f.guild(0, 0)))
			step(-1)

			// An outage keeps the guild counted: the join after it shows want+1.
			outage := f.guild(1, last)
			require.NoError(t, f.dc.Outage(ctx, outage))
			require.Eventually(t, func() bool { return f.counts().Unavailable == 1 }, 5*time.Second, 5*time.Millisecond)
			assert.Equal(t, want, f.counts().Servers)
			require.NoError(t, f.dc.Join(ctx, f.guild(101, 0)))
			step(+1)

			// Its return does not count it twice.
			require.NoError(t, f.dc.Restore(ctx, outage))
			require.Eventually(t, func() bool { return f.counts().Unavailable == 0 }, 5*time.Second, 5*time.Millisecond)
			require.NoError(t, f.dc.Join(ctx, f.guild(102, last)))
			step(+1)

			c := f.counts()
			assert.True(t, c.Complete())
			assert.Equal(t, want, c.Servers)
			assert.Equal(t, tc.shards, c.Shards)
			assert.Len(t, c.PerShard, tc.shards)
			assert.Equal(t, len(f.dc.GuildIDs()), c.Servers, "the fake Discord agrees")

			// No post ever carried a number off the timeline (a lagging count
			// is fine, a wrong one is not).
			var posted []int
			for _, p := range f.patches() {
				if n := p.Metrics["server_count"]; len(posted) == 0 || posted[len(posted)-1] != n {
					posted = append(posted, n)
				}
			}
			assert.True(t, isSubsequence(posted, timeline), "posted %v, timeline %v", posted, timeline)
		})
	}
}

func isSubsequence(sub, seq []int) bool {
	i := 0
	for _, v := range seq {
		if i < len(sub) && sub[i] == v {
			i++
		}
	}
	return i == len(sub)
}

// TestV0Stats: v0 mode posts /bots/:id/stats with the bot id from READY, the
// bare token, and the per-shard list when every shard is here.
func TestV0Stats(t *testing.T) {
	t.Parallel()
	botID := topggtest.DiscordBot().PlatformID
	t.Run("all shards", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, setup{shards: 2, perShard: 3, cfg: autopost.Config{Mode: autopost.ModeV0},
			dcOpts: []discordtest.Option{discordtest.WithBotUser(botID, "Example Bot")}})
		require.NoError(t, f.dc.Join(f.ctx(), f.guild(9, 1)))
		path := "/bots/" + botID + "/stats"
		require.Eventually(t, func() bool {
			st, ok := f.tg.LegacyStats()
			return ok && st.ServerCount == 7
		}, 5*time.Second, 5*time.Millisecond)
		reqs := f.requests(http.MethodPost, path)
		last := reqs[len(reqs)-1]
		assert.Equal(t, f.tg.Token(), last.Header.Get("Authorization"), "v0 takes the bare token")
		assert.JSONEq(t, `{"server_count":7,"shards":[3,4],"shard_count":2}`, string(last.Body))
		assert.Empty(t, f.tg.Metrics(), "nothing posted to v1")
	})
	t.Run("one shard of two", func(t *testing.T) {
		t.Parallel()
		// The other shard runs elsewhere: this process has no exact total,
		// so it posts nothing (a fleet's Source gives the leader all shards).
		f := newFixture(t, setup{shards: 2, perShard: 3, open: []int{1}, clock: newClock(),
			cfg:    autopost.Config{Mode: autopost.ModeV0, ShardCount: 2, ReadyTimeout: time.Minute},
			dcOpts: []discordtest.Option{discordtest.WithBotUser(botID, "Example Bot")}})
		require.Eventually(t, func() bool { return f.counts().Servers == 3 }, 5*time.Second, time.Millisecond)
		f.tick(time.Minute)
		require.Eventually(t, func() bool { return len(f.resultsCopy()) > 0 }, 5*time.Second, time.Millisecond)
		assert.Equal(t, []int{0}, f.resultsCopy()[0].Missing)
		assert.Empty(t, f.tg.Requests())
	})
}

// TestLogsOnePlainLinePerPost checks the log: one line per post, and no
// token anywhere.
func TestLogsOnePlainLinePerPost(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	f := newFixture(t, setup{perShard: 2, cfg: autopost.Config{Logger: newTextLogger(&buf)}})
	f.waitPosted(2)
	require.Eventually(t, func() bool { return len(f.resultsCopy()) > 0 }, 5*time.Second, 5*time.Millisecond)
	f.stop()
	out := buf.String()
	assert.Contains(t, out, `msg="posted the server count to Top.gg" component=autopost servers=2 shards=1`)
	assert.NotContains(t, out, f.tg.Token())
}

// TestNewRefusesIntervalBelowFloor: an interval below MinInterval is an error
// at New for a client of the real service (it used to be a warning at Run);
// a client of a fake on this machine (a loopback base URL) may go lower.
func TestNewRefusesIntervalBelowFloor(t *testing.T) {
	t.Parallel()
	remote, err := topgg.New("token")
	require.NoError(t, err)
	_, err = autopost.New(remote, autopost.Config{Interval: time.Millisecond})
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "autopost.Config.Interval", ce.Field)
	assert.Equal(t, "autopost.Config.Interval: 1ms is below 15m0s, the floor that keeps the bot within Top.gg's limits", err.Error())
	_, err = autopost.New(remote, autopost.Config{Interval: autopost.MinInterval})
	require.NoError(t, err)

	local, err := topgg.New("token", topgg.WithBaseURL("http://127.0.0.1:1/api"))
	require.NoError(t, err)
	_, err = autopost.New(local, autopost.Config{Interval: time.Millisecond})
	require.NoError(t, err)
}
