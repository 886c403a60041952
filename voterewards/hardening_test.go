package voterewards_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestFutureVoteDoesNotStallLaterRewards: a vote dated a day ahead used to
// make the poller ask for votes from that date on, so no later vote was ever
// rewarded. Its time is clamped, and the next vote is rewarded.
func TestFutureVoteDoesNotStallLaterRewards(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	future := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(24 * time.Hour)}
	srv.AddVote(future)
	rec := newRecorder()
	// Without cursors the poll goes on from the newest vote seen: the path
	// the future date poisoned.
	p := startPoller(t, noCursor{newClient(t, srv)}, voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore()})
	require.Eventually(t, func() bool { return rec.count() == 1 && p.Active(userID(1)).Covered }, 5*time.Second, time.Millisecond)
	rec.mu.Lock()
	for _, v := range rec.votes {
		assert.False(t, v.CreatedAt.After(time.Now().Add(voterewards.MaxClockSkew)), "created_at clamped: %s", v.CreatedAt)
		assert.True(t, v.ExpiresAt.After(v.CreatedAt))
	}
	rec.mu.Unlock()

	later := topggtest.Vote{UserID: userID(2), PlatformID: platformID(2), CreatedAt: time.Now()}
	srv.AddVote(later)
	require.Eventually(t, func() bool { return rec.snapshot()[keyOf(later)] == 1 }, 5*time.Second, time.Millisecond,
		"a vote after a future-dated one is rewarded")
	for _, r := range votesRequests(srv) {
		if sd := r.Query.Get("startDate"); sd != "" {
			start, err := time.Parse(time.RFC3339Nano, sd)
			require.NoError(t, err)
			assert.False(t, start.After(time.Now()), "never asks for the future: %s", start)
		}
	}
}

// scripted serves the pages its function returns.
type scripted func(q topgg.VotesQuery) (*topgg.VotePage, error)

func (s scripted) Votes(_ context.Context, q topgg.VotesQuery) (*topgg.VotePage, error) { return s(q) }

// TestAbsurdVoteFieldsAreCorrected: the siblings of the future date. Each
// vote goes on, with sane values, and none blocks the others.
func TestAbsurdVoteFieldsAreCorrected(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	clk := clock.NewFake(now)
	votes := []topgg.Vote{
		{UserID: userID(1), PlatformID: platformID(1), Weight: 1, CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(-2 * time.Hour)}, // expires before created
		{UserID: userID(2), PlatformID: platformID(2), Weight: 1, ExpiresAt: now.Add(time.Hour)},                                      // no created_at
		{UserID: userID(3), PlatformID: platformID(3), Weight: 1_000_000, CreatedAt: now.Add(-time.Hour)},                             // absurd weight, no expiry
		{UserID: userID(4), PlatformID: platformID(4), Weight: -3, CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(100 * 24 * time.Hour)},
		{Weight: 1, CreatedAt: now.Add(-time.Hour)}, // no id at all: skipped
		{UserID: userID(6), PlatformID: platformID(6), Weight: 2, CreatedAt: now.Add(-30 * time.Minute), ExpiresAt: now.Add(11*time.Hour + 30*time.Minute)},
	}
	var served atomic.Bool
	src := scripted(func(topgg.VotesQuery) (*topgg.VotePage, error) {
		if served.Swap(true) {
			return &topgg.VotePage{}, nil
		}
		return &topgg.VotePage{Votes: votes}, nil
	})
	rec := newRecorder()
	p := startPoller(t, src, voterewards.WithClock(voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore()}, clk))
	require.Eventually(t, func() bool { return rec.count() == 5 }, 5*time.Second, time.Millisecond)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, v := range rec.votes {
		assert.True(t, v.ExpiresAt.After(v.CreatedAt), "%s: expires after created", v.UserID)
		assert.LessOrEqual(t, v.ExpiresAt.Sub(v.CreatedAt), 2*voterewards.VoteLifetime, "%s", v.UserID)
		assert.False(t, v.CreatedAt.IsZero(), "%s", v.UserID)
		assert.GreaterOrEqual(t, v.Weight, 1)
		assert.LessOrEqual(t, v.Weight, voterewards.MaxWeight)
	}
	st := p.Active(platformID(4))
	assert.True(t, st.Until.Before(now.Add(2*voterewards.VoteLifetime)), "an absurd expiry does not keep a user active for months")
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

// TestGivenUpRewardIsRedeliveredAndGetsNoExpiry: a reward whose handler
// failed every attempt stays pending, is delivered by Redeliver (and by the
// next Run), and no expiry is scheduled before it was delivered.
func TestGivenUpRewardIsRedeliveredAndGetsNoExpiry(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	v := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-time.Hour)}
	srv.AddVote(v)
	clk := clock.NewFake(time.Now())
	var failing atomic.Bool
	failing.Store(true)
	var mu sync.Mutex
	var rewards, expiries, givenUp int
	store := voterewards.NewMemoryStore()
	cfg := voterewards.WithClock(voterewards.Config{
		Store: store, MaxAttempts: 2, RetryDelay: time.Second,
		OnReward: func(context.Context, voterewards.Vote) error {
			mu.Lock()
			defer mu.Unlock()
			rewards++
			if failing.Load() {
				return errHandler
			}
			return nil
		},
		OnExpire: func(context.Context, voterewards.Vote) error { mu.Lock(); expiries++; mu.Unlock(); return nil },
		OnGiveUp: func(voterewards.Vote, error) { mu.Lock(); givenUp++; mu.Unlock() },
	}, clk)
	p, stop := runPoller(t, newClient(t, srv), cfg)
	count := func() (int, int, int) { mu.Lock(); defer mu.Unlock(); return rewards, expiries, givenUp }
	require.Eventually(t, func() bool { r, _, _ := count(); return r == 1 }, 5*time.Second, time.Millisecond)
	// The retry waits RetryDelay on the fake clock.
	require.Eventually(t, func() bool { clk.Advance(time.Second); _, _, g := count(); return g == 1 }, 5*time.Second, time.Millisecond)
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	require.Len(t, snap.Pending, 1, "not recorded as done")
	assert.Empty(t, snap.Expiries, "no expiry for an undelivered reward")

	// Past the vote's expiry: nothing expires, the vote was never delivered.
	clk.Advance(13 * time.Hour)
	assert.Never(t, func() bool { _, e, _ := count(); return e > 0 }, 50*time.Millisecond, 5*time.Millisecond)

	failing.Store(false)
	require.NoError(t, p.Redeliver(context.Background()))
	require.Eventually(t, func() bool { r, _, _ := count(); return r == 3 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool {
		snap, err := store.Load(context.Background())
		return err == nil && len(snap.Pending) == 0
	}, 5*time.Second, time.Millisecond)
	// Delivered late, after its expiry: the expiry follows at once.
	require.Eventually(t, func() bool { _, e, _ := count(); return e == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, stop())
	assert.ErrorIs(t, p.Redeliver(context.Background()), voterewards.ErrNotRunning)
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
