package voterewards_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// addHistory adds 250 votes over the last 11 hours, each by another user
// (one user's votes less than DedupWindow apart are one vote), weights 1
// and 2.
func addHistory(srv *topggtest.Server, now time.Time) []topggtest.Vote {
	var votes []topggtest.Vote
	for i := range 250 {
		u := i
		w := 1
		if i%3 == 0 {
			w = 2
		}
		votes = append(votes, topggtest.Vote{
			UserID: userID(u), PlatformID: platformID(u), Weight: w,
			CreatedAt: now.Add(-11*time.Hour + time.Duration(i)*2*time.Minute),
		})
	}
	srv.AddVote(votes...)
	return votes
}

// votesRequests returns the vote-list requests srv received.
func votesRequests(srv *topggtest.Server) []topggtest.Request {
	var out []topggtest.Request
	for _, r := range srv.Requests() {
		if r.Path == "/v1/projects/@me/votes" {
			out = append(out, r)
		}
	}
	return out
}

func TestEveryVoteHandledOnceAcrossPages(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	votes := addHistory(srv, now)
	rec := newRecorder()
	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore()})

	requireExactlyOnce(t, srv, rec)
	rec.mu.Lock()
	for _, want := range votes {
		got := rec.votes[keyOf(want)]
		assert.Equal(t, want.UserID, got.UserID)
		assert.Equal(t, want.PlatformID, got.PlatformID)
		assert.Equal(t, want.Weight, got.Weight)
		assert.True(t, want.CreatedAt.Equal(got.CreatedAt))
		assert.True(t, want.CreatedAt.Add(12*time.Hour).Equal(got.ExpiresAt))
	}
	rec.mu.Unlock()

	reqs := votesRequests(srv)
	require.GreaterOrEqual(t, len(reqs), 4, "3 pages and the empty end")
	start, err := time.Parse(time.RFC3339Nano, reqs[0].Query.Get("startDate"))
	require.NoError(t, err)
	assert.WithinDuration(t, now.Add(-voterewards.DefaultLookback), start, 5*time.Second)
	for _, r := range reqs[1:4] {
		assert.NotEmpty(t, r.Query.Get("cursor"), "later pages follow the cursor")
		assert.Empty(t, r.Query.Get("startDate"))
	}

	// New votes come with the next poll, each once.
	for i := range 10 {
		srv.AddVote(topggtest.Vote{UserID: userID(300 + i), PlatformID: platformID(300 + i)})
	}
	requireExactlyOnce(t, srv, rec)
}

// gatedSource lets a test change the fake between two polls.
type gatedSource struct {
	mu  sync.Mutex
	src voterewards.History
}

func (g *gatedSource) Votes(ctx context.Context, q topgg.VotesQuery) (*topgg.VotePage, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.src.Votes(ctx, q)
}

func TestRefusedCursorFallsBackWithoutLossOrDuplicates(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	votes := addHistory(srv, now)
	lastSeen := votes[len(votes)-1].CreatedAt
	rec := newRecorder()
	src := &gatedSource{src: newClient(t, srv)}
	startPoller(t, src, voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore()})
	requireExactlyOnce(t, srv, rec)

	src.mu.Lock()
	before := len(votesRequests(srv))
	srv.ExpireCursors()
	// A vote dated inside the overlap: a cursor would skip it, the fallback
	// from the last vote seen minus the overlap reads it.
	srv.AddVote(topggtest.Vote{UserID: userID(500), PlatformID: platformID(500), CreatedAt: lastSeen.Add(-20 * time.Second)})
	for i := range 5 {
		srv.AddVote(topggtest.Vote{UserID: userID(501 + i), PlatformID: platformID(501 + i)})
	}
	src.mu.Unlock()

	requireExactlyOnce(t, srv, rec)
	reqs := votesRequests(srv)[before:]
	require.GreaterOrEqual(t, len(reqs), 2)
	assert.NotEmpty(t, reqs[0].Query.Get("cursor"), "the refused cursor")
	start, err := time.Parse(time.RFC3339Nano, reqs[1].Query.Get("startDate"))
	require.NoError(t, err, "the fallback reads from a startDate")
	assert.True(t, start.Equal(lastSeen.Add(-time.Minute).Truncate(100*time.Nanosecond)), "fallback from %s", start)
}

// noCursor hides the service's cursors, as a service that gives none would.
type noCursor struct{ src voterewards.History }

func (n noCursor) Votes(ctx context.Context, q topgg.VotesQuery) (*topgg.VotePage, error) {
	p, err := n.src.Votes(ctx, q)
	if p != nil {
		p.Cursor = ""
	}
	return p, err
}

func TestEmptyCursorFallsBackToLastSeen(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	for i := range 250 {
		srv.AddVote(topggtest.Vote{UserID: userID(i), PlatformID: platformID(i), CreatedAt: now.Add(-time.Hour + time.Duration(i)*time.Second)})
	}
	rec := newRecorder()
	startPoller(t, noCursor{newClient(t, srv)}, voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore()})
	requireExactlyOnce(t, srv, rec)
	srv.AddVote(topggtest.Vote{UserID: userID(999), PlatformID: platformID(999)})
	requireExactlyOnce(t, srv, rec)
	for _, r := range votesRequests(srv) {
		require.Empty(t, r.Query.Get("cursor"))
	}
}

func TestLookbackIsCutToOneYear(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	old := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.AddDate(0, 0, -400)}
	inYear := topggtest.Vote{UserID: userID(2), PlatformID: platformID(2), CreatedAt: now.AddDate(0, 0, -300)}
	recent := topggtest.Vote{UserID: userID(3), PlatformID: platformID(3), CreatedAt: now.Add(-time.Hour)}
	srv.AddVote(old, inYear, recent)
	rec := newRecorder()
	startPoller(t, newClient(t, srv), voterewards.Config{
		OnReward: rec.handle, Store: voterewards.NewMemoryStore(), Lookback: 3 * 365 * 24 * time.Hour,
	})
	require.Eventually(t, func() bool { return rec.count() == 2 }, 5*time.Second, 5*time.Millisecond)
	got := rec.snapshot()
	assert.Equal(t, 1, got[keyOf(inYear)])
	assert.Equal(t, 1, got[keyOf(recent)])
	assert.Zero(t, got[keyOf(old)])

	start, err := time.Parse(time.RFC3339Nano, votesRequests(srv)[0].Query.Get("startDate"))
	require.NoError(t, err)
	assert.False(t, start.Before(now.AddDate(-1, 0, 0)), "startDate %s is more than a year back", start)
	assert.True(t, start.Before(now.AddDate(-1, 0, 0).Add(2*time.Hour)), "startDate %s is cut too far", start)
}

// timedSource records when each call was made.
type timedSource struct {
	mu    sync.Mutex
	src   voterewards.History
	calls []time.Time
}

func (s *timedSource) Votes(ctx context.Context, q topgg.VotesQuery) (*topgg.VotePage, error) {
	s.mu.Lock()
	s.calls = append(s.calls, time.Now())
	s.mu.Unlock()
	return s.src.Votes(ctx, q)
}

func TestRateLimitWaitsRetryAfter(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-time.Minute)})
	require.NoError(t, srv.Inject(topggtest.Fault{Method: "GET", Path: "/v1/projects/@me/votes", RetryAfter: time.Second}))
	src := &timedSource{src: newClient(t, srv, topgg.WithRetryPolicy(topgg.RetryPolicy{MaxAttempts: 1}))}
	rec := newRecorder()
	startPoller(t, src, voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(), Interval: 10 * time.Millisecond})
	requireExactlyOnce(t, srv, rec)
	src.mu.Lock()
	defer src.mu.Unlock()
	require.GreaterOrEqual(t, len(src.calls), 2)
	assert.GreaterOrEqual(t, src.calls[1].Sub(src.calls[0]), 950*time.Millisecond, "the poll after a 429 waits Retry-After")
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	ok := func(context.Context, voterewards.Vote) error { return nil }
	store := voterewards.NewMemoryStore()
	var nilStore *boltstate.State
	for name, c := range map[string]struct {
		cfg   voterewards.Config
		field string // the error names it
	}{
		"no handler":       {voterewards.Config{Store: store}, "OnReward"},
		"no store":         {voterewards.Config{OnReward: ok}, "Store"},
		"typed nil store":  {voterewards.Config{OnReward: ok, Store: nilStore}, "Store"},
		"negative":         {voterewards.Config{OnReward: ok, Store: store, Interval: -time.Second}, "Interval"},
		"negative grace":   {voterewards.Config{OnReward: ok, Store: store, GracePeriod: -time.Second}, "GracePeriod"},
		"negative workers": {voterewards.Config{OnReward: ok, Store: store, Concurrency: -1}, "Concurrency"},
	} {
		_, err := voterewards.New(noCursor{}, c.cfg)
		var ce *topgg.ConfigError
		if assert.ErrorAs(t, err, &ce, name) {
			assert.Equal(t, "voterewards.Config."+c.field, ce.Field, name)
		}
	}
	cfg := voterewards.Config{OnReward: ok, Store: store}
	_, err := voterewards.New(nil, cfg)
	assert.ErrorIs(t, err, topgg.ErrNilArgument)
	var client *topgg.Client
	_, err = voterewards.New(client, cfg)
	assert.ErrorIs(t, err, topgg.ErrNilArgument, "a typed nil *topgg.Client fails at New, not in a goroutine later")
	var src *sliceSource
	_, err = voterewards.New(src, cfg)
	assert.ErrorIs(t, err, topgg.ErrNilArgument, "any typed nil Source")
	assert.Contains(t, fmt.Sprint(voterewards.New(noCursor{}, voterewards.Config{OnReward: ok, Store: store, RetryDelay: -1})), "RetryDelay",
		"the error names the field")

	// The interval floor protects the real service: an error at New (it was a
	// warning, and a 1 ms interval sent 1,355 requests in 2 s); a client of a
	// fake on this machine may go lower.
	remote, err := topgg.New("token")
	require.NoError(t, err)
	_, err = voterewards.New(remote, voterewards.Config{OnReward: ok, Store: store, Interval: time.Millisecond})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	assert.Equal(t, "voterewards.Config.Interval: 1ms is below 10s, the floor that keeps the poll within Top.gg's limits", err.Error())
	_, err = voterewards.New(remote, voterewards.Config{OnReward: ok, Store: store, Interval: voterewards.MinInterval})
	require.NoError(t, err)
	local, err := topgg.New("token", topgg.WithBaseURL("http://localhost:1/api"))
	require.NoError(t, err)
	_, err = voterewards.New(local, voterewards.Config{OnReward: ok, Store: store, Interval: time.Millisecond})
	require.NoError(t, err)
}

// repeatLast answers the request after the last page with the last vote
// again and the same cursor, as a service might that never sends an empty page.
type repeatLast struct {
	mu    sync.Mutex
	src   voterewards.History
	last  topgg.Vote
	calls int
}

func (r *repeatLast) Votes(ctx context.Context, q topgg.VotesQuery) (*topgg.VotePage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	p, err := r.src.Votes(ctx, q)
	if err != nil {
		return nil, err
	}
	if len(p.Votes) == 0 {
		return &topgg.VotePage{Cursor: q.Cursor, Votes: []topgg.Vote{r.last}}, nil
	}
	r.last = p.Votes[len(p.Votes)-1]
	return p, nil
}

func TestRepeatedPageEndsThePoll(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	addHistory(srv, time.Now())
	src := &repeatLast{src: newClient(t, srv)}
	rec := newRecorder()
	p := startPoller(t, src, voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(), Interval: 50 * time.Millisecond})
	requireExactlyOnce(t, srv, rec)
	require.Eventually(t, func() bool { return p.Active(userID(1)).Covered }, 5*time.Second, 5*time.Millisecond)
	src.mu.Lock()
	before := src.calls
	src.mu.Unlock()
	// Over six intervals: about one request per interval, not a busy loop.
	assert.Never(t, func() bool {
		src.mu.Lock()
		defer src.mu.Unlock()
		return src.calls-before > 8
	}, 300*time.Millisecond, 5*time.Millisecond, "one request per interval, not a busy loop")
}

func TestFailedPollsAreRetried(t *testing.T) {
	t.Parallel()
	srv := newServer(t, topggtest.WithPageSize(50))
	addHistory(srv, time.Now())
	// Failures on the first request and in the middle of the pages.
	require.NoError(t, srv.Inject(topggtest.Fault{Method: "GET", Path: "/v1/projects/@me/votes", Times: 2, Status: 503}))
	rec := newRecorder()
	client := newClient(t, srv, topgg.WithRetryPolicy(topgg.RetryPolicy{MaxAttempts: 1}))
	startPoller(t, client, voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore()})
	require.Eventually(t, func() bool { return rec.count() >= 50 }, 5*time.Second, time.Millisecond)
	require.NoError(t, srv.Inject(topggtest.Fault{Method: "GET", Path: "/v1/projects/@me/votes", Times: 3, Status: 500}))
	require.NoError(t, srv.Inject(topggtest.Fault{Method: "GET", Path: "/v1/projects/@me/votes", Drop: true, Times: 2}))
	require.Eventually(t, func() bool { return srv.PendingFaults() == 0 }, 5*time.Second, time.Millisecond)
	srv.AddVote(topggtest.Vote{UserID: userID(900), PlatformID: platformID(900)})
	requireExactlyOnce(t, srv, rec)
}

// TestRunRacesItsCancelAndRunsAgain starts and cancels Run at once, many
// times, with work left pending so that workers start at once: Run must
// return only after everything it started, a concurrent Run is refused, and
// a Run after the last one returned works.
func TestRunRacesItsCancelAndRunsAgain(t *testing.T) {
	t.Parallel()
	store := voterewards.NewMemoryStore()
	now := time.Now()
	var pending []voterewards.Vote
	for i := range 8 {
		tv := topgg.Vote{UserID: userID(i), PlatformID: platformID(i), CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(11 * time.Hour)}
		pending = append(pending, voterewards.Vote{Vote: tv, Origin: voterewards.OriginHistory})
	}
	_, err := store.Ingest(context.Background(), &voterewards.Checkpoint{LastSeen: now}, pending, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	src := &sliceSource{}
	var calls atomic.Int64
	p, err := voterewards.New(src, voterewards.Config{
		OnReward: func(context.Context, voterewards.Vote) error { calls.Add(1); return errHandler }, // stays pending
		Store:    store, Interval: time.Hour, RetryDelay: time.Hour, MaxAttempts: 2,
	})
	require.NoError(t, err)
	for range 300 {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, p.Run(ctx)) })
		wg.Go(cancel)
		wg.Wait()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	before := calls.Load()
	go func() { done <- p.Run(ctx) }()
	require.Eventually(t, func() bool { return calls.Load() > before }, 5*time.Second, time.Millisecond, "Run delivers")
	assert.ErrorIs(t, p.Run(context.Background()), topgg.ErrRunning, "a second Run while one runs is refused")
	cancel()
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)
}

// TestSourceAnsweringNothingIsAFailedPoll: a Source that returns neither a
// page nor an error is a failed poll, retried, not a panic in a goroutine.
func TestSourceAnsweringNothingIsAFailedPoll(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	src := scripted(func(topgg.VotesQuery) (*topgg.VotePage, error) { calls.Add(1); return nil, nil })
	startPoller(t, src, voterewards.Config{OnReward: newRecorder().handle, Store: voterewards.NewMemoryStore()})
	require.Eventually(t, func() bool { return calls.Load() >= 2 }, 5*time.Second, time.Millisecond)
}

// TestHandlersReceiveTheLedger: end to end, through the fake service's
// history and a signed webhook delivery, each reward carries the voter's
// Stats as that vote left them: a first vote read from the history has
// Streak 1; the user's next vote, delivered by webhook a day later, has
// Streak 2; the history's record of that same vote, read by later polls,
// is neither rewarded nor counted. Store.Stats and Store.Leaderboard read
// the same ledger. On both stores of this package.
func TestHandlersReceiveTheLedger(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) voterewards.Store{
		"memory": func(*testing.T) voterewards.Store { return voterewards.NewMemoryStore() },
		"bolt": func(t *testing.T) voterewards.Store {
			s, err := boltstate.Open(t.TempDir())
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			now := time.Now().UTC()
			first := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), Weight: 2, CreatedAt: now.Add(-25 * time.Hour)}
			srv.AddVote(first) // in the history only: no webhook yet
			rec := newRecorder()
			store := open(t)
			p := startPoller(t, newClient(t, srv), voterewards.Config{
				Store: store, OnReward: rec.handle, Lookback: 48 * time.Hour,
			})
			require.Eventually(t, func() bool { return rec.total() == 1 }, 5*time.Second, 5*time.Millisecond, "the history's vote")
			v := rec.nth(0)
			assert.Equal(t, voterewards.OriginHistory, v.Origin)
			assert.Equal(t, platformID(1), v.Stats.UserID)
			assert.Equal(t, 1, v.Stats.Streak)
			assert.Equal(t, 2, v.Stats.Total)

			rcv, err := webhook.New(webhook.Config{Secrets: []webhook.Secret{hookSecret}, OnVote: p.IngestWebhook})
			require.NoError(t, err)
			hs := httptest.NewServer(rcv)
			t.Cleanup(hs.Close)
			require.NoError(t, srv.AddWebhook(hs.URL, string(hookSecret)))
			// The webhook comes first: the next poll is held (the poller makes
			// one at a time) until the webhook's vote is in; before, a poll
			// under load could read the vote first and make it the history's.
			require.NoError(t, srv.Inject(topggtest.Fault{Method: http.MethodGet, Path: "/v1/projects/@me/votes", Delay: 3 * time.Second}))
			require.Eventually(t, func() bool { return srv.Held() == 1 }, 5*time.Second, time.Millisecond, "no poll held")
			srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), Weight: 1, CreatedAt: now}) // webhook, then history
			require.Eventually(t, func() bool { return rec.total() == 2 }, 5*time.Second, 5*time.Millisecond, "the webhook's vote")
			v = rec.nth(1)
			assert.Equal(t, voterewards.OriginWebhook, v.Origin)
			assert.Equal(t, 2, v.Stats.Streak, "the second vote in time continues the streak")
			assert.Equal(t, 2, v.Stats.Votes)
			assert.Equal(t, 3, v.Stats.Total)

			// The history's record of the webhook's vote: read, not counted.
			n := len(votesRequests(srv))
			require.Eventually(t, func() bool { return len(votesRequests(srv)) >= n+3 }, 10*time.Second, time.Millisecond, "polling stopped")
			assert.Equal(t, 2, rec.total(), "the history's record is no new reward")
			st, err := store.Stats(t.Context(), platformID(1))
			require.NoError(t, err)
			assert.Equal(t, v.Stats, st, "the ledger counted the vote once")
			board, err := store.Leaderboard(t.Context(), time.Time{}, 10)
			require.NoError(t, err)
			require.Len(t, board, 1)
			assert.Equal(t, voterewards.Standing{UserID: platformID(1), Votes: 2, Total: 3, ReachedAt: v.CreatedAt}, board[0])
			_, err = store.Leaderboard(t.Context(), time.Time{}, 0)
			require.ErrorIs(t, err, voterewards.ErrBadLeaderboard)
		})
	}
}

// sliceSource serves a fixed vote list in pages of 100, startDate inclusive,
// with cursors only where its mode says: it plays services that give no
// cursor, or give one on startDate pages and none on cursor pages.
type sliceSource struct {
	votes         []topgg.Vote // by CreatedAt
	cursorOnStart bool

	mu      sync.Mutex
	queries []topgg.VotesQuery
}

func (s *sliceSource) Votes(_ context.Context, q topgg.VotesQuery) (*topgg.VotePage, error) {
	s.mu.Lock()
	s.queries = append(s.queries, q)
	s.mu.Unlock()
	i := 0
	if q.Cursor != "" {
		var err error
		if i, err = strconv.Atoi(q.Cursor); err != nil {
			return nil, err
		}
	} else {
		i, _ = slices.BinarySearchFunc(s.votes, q.StartDate, func(v topgg.Vote, t time.Time) int { return v.CreatedAt.Compare(t) })
	}
	i = min(i, len(s.votes))
	end := min(i+100, len(s.votes))
	page := &topgg.VotePage{Votes: slices.Clone(s.votes[i:end])}
	if s.cursorOnStart && q.Cursor == "" {
		page.Cursor = strconv.Itoa(end)
	}
	return page, nil
}

func (s *sliceSource) calls() []topgg.VotesQuery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.queries)
}

// burst returns n votes of distinct users 100 ms apart from base: more than a
// page inside the default one-minute overlap once n > 100.
func burst(n int, base time.Time) []topgg.Vote {
	out := make([]topgg.Vote, n)
	for i := range out {
		c := base.Add(time.Duration(i) * 100 * time.Millisecond).UTC()
		out[i] = topgg.Vote{UserID: userID(i), PlatformID: platformID(i), Weight: 1, CreatedAt: c, ExpiresAt: c.Add(12 * time.Hour)}
	}
	return out
}

// requireBurstReadOnce starts a poller on src with a one-hour interval, so
// that only the first poll runs, waits until it has read every vote, and
// checks that each was handled once and that the poll then ended.
func requireBurstReadOnce(t *testing.T, src *sliceSource) []topgg.VotesQuery {
	t.Helper()
	rec := newRecorder()
	p, stop := runPoller(t, src, voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(), Interval: time.Hour})
	done := assert.Eventually(t, func() bool { return rec.count() == len(src.votes) && p.Active(userID(0)).Covered },
		5*time.Second, 5*time.Millisecond)
	require.True(t, done, "handled %d of %d votes, %d requests", rec.count(), len(src.votes), len(src.calls()))
	// The poll is over: no request follows until the interval passes.
	n := len(src.calls())
	require.NoError(t, stop())
	assert.Len(t, src.calls(), n)
	for _, v := range src.votes {
		assert.Equal(t, 1, rec.snapshot()[voterewards.Vote{Vote: v}.Key()], "vote of %s", v.UserID)
	}
	return src.calls()
}

func TestNoCursorBurstLongerThanAPageIsReadWhole(t *testing.T) {
	t.Parallel()
	src := &sliceSource{votes: burst(250, time.Now().Add(-time.Hour))}
	calls := requireBurstReadOnce(t, src)
	// Three pages (0-99, 99-198, 198-249) and the repeat of the last vote,
	// each from the newest vote of the page before.
	require.Len(t, calls, 4)
	for i, want := range []int{99, 198, 249} {
		q := calls[i+1]
		assert.True(t, q.StartDate.Equal(src.votes[want].CreatedAt), "request %d from %s", i+1, q.StartDate)
	}
}

func TestCursorOnlyOnStartPagesDoesNotSpin(t *testing.T) {
	t.Parallel()
	src := &sliceSource{votes: burst(150, time.Now().Add(-time.Hour)), cursorOnStart: true}
	calls := requireBurstReadOnce(t, src)
	assert.LessOrEqual(t, len(calls), 5, "requests: %v", calls)
}

// sameInstant answers every request with a page of one new vote and no cursor
// that is always dated the same: the poll must stop at its repeat, not run on.
type sameInstant struct {
	mu sync.Mutex
	n  int
	at time.Time
}

func (s *sameInstant) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	v := topgg.Vote{UserID: userID(s.n), PlatformID: platformID(s.n), CreatedAt: s.at, ExpiresAt: s.at.Add(12 * time.Hour)}
	return &topgg.VotePage{Votes: []topgg.Vote{v}}, nil
}

func (s *sameInstant) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func TestRepeatedRequestEndsThePoll(t *testing.T) {
	t.Parallel()
	src := &sameInstant{at: time.Now().Add(-time.Hour).UTC()}
	rec := newRecorder()
	p, stop := runPoller(t, src, voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(), Interval: time.Hour})
	require.Eventually(t, func() bool { return p.Active(userID(1)).Covered }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, stop())
	// From Since, then from the vote's instant; that request is not sent again.
	assert.Equal(t, 2, src.calls())
}

// TestCyclingCursorsCostOneRequestPerInterval: a service that answers every
// request with the same vote and a new cursor made the poller send about
// 2,900 requests/s. A page that adds nothing ends the poll round; the next
// comes after Interval. Over real HTTP, with the real client.
func TestCyclingCursorsCostOneRequestPerInterval(t *testing.T) {
	t.Parallel()
	created := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	var requests atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"cursor":"c%d","data":[{"user_id":"%s","platform_id":"%s","weight":1,"created_at":%q}]}`,
			n, userID(1), platformID(1), created)
	}))
	t.Cleanup(hs.Close)
	client, err := topgg.New("token", topgg.WithBaseURL(hs.URL), topgg.WithHTTPClient(hs.Client()))
	require.NoError(t, err)
	clk := clock.NewFake(time.Now())
	rec := newRecorder()
	cfg := voterewards.WithClock(voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(), Interval: time.Minute}, clk)
	p, err := voterewards.New(client, cfg)
	require.NoError(t, err)
	stop := goRun(t, p.Run)
	t.Cleanup(func() { _ = stop() })

	// The first round: the vote, then the same vote again (nothing new): end.
	require.Eventually(t, func() bool { return p.Active(userID(1)).Covered && clk.Timers() > 0 }, 5*time.Second, time.Millisecond)
	assert.EqualValues(t, 2, requests.Load(), "one round, two requests")
	for round := range 3 {
		before := requests.Load()
		clk.Advance(time.Minute)
		require.Eventually(t, func() bool { return requests.Load() > before }, 5*time.Second, time.Millisecond)
		// The round is over once the loop sleeps again.
		require.Eventually(t, func() bool { return clk.Timers() > 0 }, 5*time.Second, time.Millisecond)
		assert.EqualValues(t, before+1, requests.Load(), "round %d: one request per interval", round)
	}
	assert.Equal(t, 1, rec.total(), "the repeated vote is rewarded once")
	require.NoError(t, stop())
}

// countLines counts the log lines that contain every part.
func countLines(log string, parts ...string) int {
	n := 0
	for line := range strings.Lines(log) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// TestRefusedTokenLoggedOncePerSpell: a poll refused with a 401 is the
// client's to report (once, at error level, with the hint); the poller logs
// the first failure of the spell as a warning and the repeats at debug
// level, and starts again after a success.
func TestRefusedTokenLoggedOncePerSpell(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	var buf testlog.Buffer
	client := newClient(t, srv, topgg.WithLogger(buf.Logger()))
	const warn, debug = `level=WARN msg="poll failed: Top.gg refuses the token"`, `level=DEBUG msg="poll failed: Top.gg refuses the token"`
	spell := func(n int) {
		require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/*", Status: http.StatusUnauthorized, Times: n}))
	}

	spell(4)
	_ = startPoller(t, client, voterewards.Config{OnReward: newRecorder().handle, Store: voterewards.NewMemoryStore(),
		Interval: 5 * time.Millisecond, Logger: buf.Logger()})
	// The spell ends when the faults are spent: the client says so.
	require.Eventually(t, func() bool { return strings.Contains(buf.String(), "accepts the token again") },
		10*time.Second, time.Millisecond)
	log := buf.String()
	assert.Equal(t, 1, countLines(log, warn), log)
	assert.Equal(t, 3, countLines(log, debug), log)
	assert.Zero(t, countLines(log, "level=ERROR", "poll failed"), "a refused token is no poll error of its own: %s", log)
	assert.Equal(t, 1, countLines(log, "level=ERROR", "refused the token", "check="), "the client's one error, with what to check")

	// A new spell after a success is reported again.
	spell(2)
	require.Eventually(t, func() bool { return countLines(buf.String(), "accepts the token again") == 2 },
		10*time.Second, time.Millisecond)
	log = buf.String()
	assert.Equal(t, 2, countLines(log, warn), log)
	assert.Equal(t, 4, countLines(log, debug), log)
	assert.Zero(t, countLines(log, "level=ERROR", "poll failed"), log)
}

// TestPrintingThePollerWhileItIngestsIsSafe: fmt of a Poller, or of its
// memory store, walked their live state unlocked while votes were ingested
// (a data race, under -race).
func TestPrintingThePollerWhileItIngestsIsSafe(t *testing.T) {
	t.Parallel()
	store := voterewards.NewMemoryStore()
	p, err := voterewards.New(historyNever{}, voterewards.Config{Store: store, OnReward: func(context.Context, voterewards.Vote) error { return nil }})
	require.NoError(t, err)
	out := testlog.PrintWhile(func() {
		now := time.Now()
		for n := range 200 {
			v := voterewards.Vote{Origin: voterewards.OriginWebhook,
				Vote: topgg.Vote{UserID: userID(n), PlatformID: platformID(n), Weight: 1, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}}
			assert.NoError(t, p.Ingest(context.Background(), v))
		}
	}, p, store)
	assert.False(t, strings.Contains(out, platformID(0)), "a vote of the store printed")
}

func TestActiveMatchesTheServiceVoteStatus(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	vote := func(u int, ago time.Duration) topggtest.Vote {
		return topggtest.Vote{UserID: userID(u), PlatformID: platformID(u), CreatedAt: now.Add(-ago), Weight: 1 + u%2}
	}
	srv.AddVote(
		vote(1, time.Hour),                          // active
		vote(2, 12*time.Hour+30*time.Minute),        // expired
		vote(3, 20*time.Hour), vote(3, 2*time.Hour), // expired, then active
		vote(4, 23*time.Hour), vote(4, 11*time.Hour), // 12 h apart: the later counts
		vote(5, 11*time.Hour+59*time.Minute), // active for one more minute
	)
	client := newClient(t, srv)
	p := startPoller(t, client, voterewards.Config{OnReward: newRecorder().handle, Store: voterewards.NewMemoryStore(), Lookback: 24 * time.Hour})
	require.Eventually(t, func() bool { return p.Active(userID(1)).Covered }, 5*time.Second, 5*time.Millisecond)

	ctx := context.Background()
	for u := 1; u <= 6; u++ {
		for _, c := range []struct {
			id  string
			src topgg.UserIDKind
		}{{userID(u), topgg.UserIDTopgg}, {platformID(u), topgg.UserIDDiscord}} {
			want, err := client.VoteStatus(ctx, c.id, c.src)
			require.NoError(t, err)
			got := p.Active(c.id)
			assert.True(t, got.Covered)
			assert.Equal(t, want != nil, got.Active, "user %d by %s", u, c.src)
			if want != nil {
				assert.True(t, want.ExpiresAt.Equal(got.Until), "user %d by %s: service %s, cache %s", u, c.src, want.ExpiresAt, got.Until)
			} else {
				assert.Zero(t, got.Until, "user %d by %s", u, c.src)
			}
		}
	}
	assert.True(t, p.Active(userID(1)).Active, "the test has active users")
	assert.False(t, p.Active(userID(2)).Active, "the test has inactive users")
}

func TestActiveSaysWhenTheWindowIsNotCovered(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-30 * time.Minute)})
	rec := newRecorder()
	p, err := voterewards.New(newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(), Lookback: time.Hour, Interval: 10 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, voterewards.Status{}, p.Active(userID(1)), "nothing known before Run")
	stop := goRun(t, p.Run)
	t.Cleanup(func() { _ = stop() })
	requireExactlyOnce(t, srv, rec)
	// Read to the end, but only one hour of the twelve-hour window.
	st := p.Active(userID(1))
	assert.True(t, st.Active)
	assert.False(t, st.Covered)
}

// brokenFeed is a MemoryStore whose feed fails for good at once.
type brokenFeed struct{ *voterewards.MemoryStore }

var errFeedBroken = errors.New("feed broken")

func (brokenFeed) Follow(context.Context, func(voterewards.Vote), func()) error { return errFeedBroken }

// A Mirror whose feed fails for good must say so (and so be restarted by its
// supervisor), not sit with a cache that no longer learns anything until its
// context ends.
func TestMirrorReturnsWhenTheFeedFails(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	p, err := voterewards.New(newClient(t, srv), voterewards.Config{
		OnReward: newRecorder().handle, Store: brokenFeed{voterewards.NewMemory()},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Mirror(ctx) }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, errFeedBroken)
	case <-time.After(5 * time.Second):
		cancel()
		<-done
		t.Fatal("Mirror did not return within 5 s of its feed failing")
	}
}

// TestMirrorStartedBeforeTheLeaderIsCoveredWithinSeconds: a follower whose
// Mirror starts before the leader's first poll answers Covered within
// seconds of that poll, not after the next minute's prune (a vote-gated
// command would turn voters away in followers until then).
func TestMirrorStartedBeforeTheLeaderIsCoveredWithinSeconds(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	store := voterewards.NewMemoryStore()
	follower, err := voterewards.New(newClient(t, srv), voterewards.Config{OnReward: newRecorder().handle, Store: store})
	require.NoError(t, err)
	stop := goRun(t, follower.Mirror)
	t.Cleanup(func() { _ = stop() })
	require.False(t, follower.Active(platformID(1)).Covered)

	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: newRecorder().handle, Store: store})
	assert.Eventually(t, func() bool { return follower.Active(platformID(1)).Covered }, 5*time.Second, 10*time.Millisecond,
		"the follower still says it is reading the history")
}

// TestLeaderWhoseClockIsBehindDoesNotReadTheHistoryAgain: the last leader
// read a vote a minute ago; the next leader's clock is five minutes behind,
// so that vote's time (the checkpoint's LastSeen) lies ahead of it. Votes
// rewarded ten days ago have left the dedup set. The new leader must go on
// from the checkpoint, not read the history again from its start (and
// reward those votes again).
func TestLeaderWhoseClockIsBehindDoesNotReadTheHistoryAgain(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now().UTC()
	old := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(-10 * 24 * time.Hour)}
	recent := topggtest.Vote{UserID: userID(2), PlatformID: platformID(2), CreatedAt: now.Add(-time.Minute)}
	srv.AddVote(old, recent)
	read := srv.Votes()[1]

	store := voterewards.NewMemoryStore()
	v := voterewards.Vote{Vote: read, Origin: voterewards.OriginHistory}
	cp := voterewards.Checkpoint{LastSeen: read.CreatedAt, Since: now.Add(-30 * 24 * time.Hour)}
	_, err := store.Ingest(context.Background(), &cp, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	require.NoError(t, store.Delivered(context.Background(), v, false))

	rec := newRecorder()
	clk := clock.NewFake(now.Add(-5 * time.Minute))
	cfg := voterewards.WithClock(voterewards.Config{OnReward: rec.handle, Store: store, Concurrency: 1}, clk)
	p := startPoller(t, newClient(t, srv), cfg)
	require.Eventually(t, func() bool { return p.Active("x").Covered }, 5*time.Second, time.Millisecond)
	// One worker: once a vote ingested now is rewarded, what the poll queued was too.
	w := webhookVote(3, clk.Now())
	require.NoError(t, p.Ingest(context.Background(), w))
	require.Eventually(t, func() bool { return rec.count() > 0 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, map[string]int{w.Key(): 1}, rec.snapshot(), "a vote rewarded ten days ago was rewarded again")
}
