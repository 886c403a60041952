package voterewards_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
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

// idleBoltPoller is a Poller on a bolt store, not running: webhook votes are
// stored and counted by IngestWebhook alone.
func idleBoltPoller(t *testing.T) *voterewards.Poller {
	t.Helper()
	s, err := boltstate.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	p, err := voterewards.New(historyNever{}, voterewards.Config{
		Store: s, OnReward: func(context.Context, voterewards.Vote) error { return nil },
	})
	require.NoError(t, err)
	return p
}

// TestAncientHistoryVoteKeepsTheLedgerMoving: a vote of the history created before 1678
// (a service's bug) passes sanitize; its time does not fit the stores'
// nanosecond encoding (bolt's putTime, pgstore's UnixNano), so the ledger
// keeps another time: the bolt voter's LastVote becomes 2169 (the 1000 vote
// read back), every later vote is "late", and the streak and month never
// move again. sanitize must refuse it or treat it as missing. (A webhook
// vote that old is now dropped as expired on arrival, 3111948; the history
// path still counts it.)
func TestAncientHistoryVoteKeepsTheLedgerMoving(t *testing.T) {
	ctx := context.Background()
	s, err := boltstate.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	now := time.Now().UTC().Truncate(time.Second)
	ancient := time.Date(1000, 6, 15, 0, 0, 0, 0, time.UTC)
	const user = "3000000000000000001"
	src := &onePage{page: topgg.VotePage{Cursor: "c1", Votes: []topgg.Vote{
		{PlatformID: user, Weight: 1, CreatedAt: ancient, ExpiresAt: ancient.Add(voterewards.VoteLifetime)},
		{PlatformID: user, Weight: 1, CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)},
	}}}
	startPoller(t, src, voterewards.Config{Store: s, OnReward: func(context.Context, voterewards.Vote) error { return nil }})
	var st voterewards.Stats
	require.Eventually(t, func() bool {
		st, err = s.Stats(ctx, user)
		return err == nil && st.Votes > 0
	}, 10*time.Second, 5*time.Millisecond, "the page was not ingested")
	assert.True(t, st.LastVote.Equal(now), "LastVote %v, want the modern vote's %v", st.LastVote, now)
	votes, _ := st.ThisMonth(now)
	assert.Positive(t, votes, "the modern vote counts in its month")
	assert.Equal(t, 1, st.CurrentStreak(now), "the modern vote starts a streak")
}

// onePage is a History that answers one page, then no new vote.
type onePage struct {
	mu   sync.Mutex
	page topgg.VotePage
	sent bool
}

func (o *onePage) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sent {
		return &topgg.VotePage{Cursor: o.page.Cursor}, nil
	}
	o.sent = true
	p := o.page
	return &p, nil
}

// TestControlCharactersInIDs: Discord and Top.gg ids are numbers; an
// id holding a control character or invalid UTF-8 is stored by bolt but
// fails PostgreSQL's text (NUL, bad UTF-8: the whole Ingest fails on every
// retry) and splits pgstore's feed payloads ("\n"). checkIDs should refuse
// it (ErrInvalidVote) so that every store sees the same votes.
func TestControlCharactersInIDs(t *testing.T) {
	ctx := context.Background()
	p := idleBoltPoller(t)
	now := time.Now().UTC()
	for _, id := range []string{"3\x00001", "3\n001", "3\xff001"} {
		err := p.IngestWebhook(ctx, webhook.Vote{Vote: topgg.Vote{PlatformID: id, Weight: 1, CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)}, Version: 1, ID: "v" + id})
		assert.ErrorIs(t, err, voterewards.ErrInvalidVote, "%q", id)
	}
}

// TestFutureVoteKeepsNoFarExpiry: a vote stamped ahead of the clock is moved
// back whole, from every source: its expiry does not stay up to a day ahead
// of the clamped created_at (a history vote 11 h ahead was active until now +
// 23 h, a webhook vote 1 h ahead until now + 13 h).
func TestFutureVoteKeepsNoFarExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	store := voterewards.NewMemoryStore()
	p, err := voterewards.New(historyNever{}, voterewards.WithClock(voterewards.Config{
		Store: store, OnReward: func(context.Context, voterewards.Vote) error { return nil },
	}, clock.NewFake(now)))
	require.NoError(t, err)
	hist := func(n int, ahead time.Duration) {
		c := now.Add(ahead)
		require.NoError(t, p.Ingest(ctx, voterewards.Vote{Origin: voterewards.OriginHistory,
			Vote: topgg.Vote{UserID: userID(n), PlatformID: platformID(n), Weight: 1, CreatedAt: c, ExpiresAt: c.Add(voterewards.VoteLifetime)}}))
	}
	hook := func(n int, ahead time.Duration, version int) {
		c := now.Add(ahead)
		require.NoError(t, p.IngestWebhook(ctx, webhook.Vote{
			Vote: topgg.Vote{
				UserID:     userID(n),
				PlatformID: platformID(n),
				Weight:     1,
				CreatedAt:  c,
				ExpiresAt:  c.Add(voterewards.VoteLifetime),
			},
			Version: version,
			ID:      "v" + platformID(n),
		}))
	}
	hist(1, 11*time.Hour)
	hook(2, time.Hour, 1)
	hook(3, 11*time.Hour, 1)
	hook(4, 11*time.Hour, 0)
	hist(5, 30*time.Second) // within the skew: kept as sent
	latest := now.Add(voterewards.MaxClockSkew + voterewards.VoteLifetime)
	for n := 1; n <= 5; n++ {
		st := p.Active(platformID(n))
		require.True(t, st.Active, "vote %d", n)
		assert.False(t, st.Until.After(latest), "vote %d active until now+%v", n, st.Until.Sub(now))
		stats, err := store.Stats(ctx, platformID(n))
		require.NoError(t, err)
		assert.False(t, stats.StreakUntil.After(latest.Add(voterewards.DefaultStreakGrace)), "vote %d streak until now+%v", n, stats.StreakUntil.Sub(now))
	}
	assert.Equal(t, now.Add(30*time.Second+voterewards.VoteLifetime), p.Active(platformID(5)).Until)
}
