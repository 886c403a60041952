package autopost_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// The tests in this file time the Poster with a fake clock: they advance it
// instead of sleeping through intervals.

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
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	client, err := tg.NewClient()
	require.NoError(t, err)
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
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run went on after its term was over")
	}
	assert.Len(t, tg.Metrics(), 1, "posted after the term's deadline")
	assert.Equal(t, int32(1), results.Load(), "the refused post was reported")
	assert.ErrorIs(t, clock.CheckTerm(clock.WithTerm(ctx, tm)), clock.ErrTermOver)
}
