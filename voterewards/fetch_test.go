package voterewards_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

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
