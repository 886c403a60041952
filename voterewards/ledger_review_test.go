package voterewards_test

// Findings of the hostile review (review-attack) in files outside the
// ledger's: each test failed on the code it names before its fix.

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// reviewPoller is a Poller on a bolt store, not running: webhook votes are
// stored and counted by IngestWebhook alone.
func reviewPoller(t *testing.T) *voterewards.Poller {
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

// TestReviewAncientHistoryVote: a vote of the history created before 1678
// (a service's bug) passes sanitize; its time does not fit the stores'
// nanosecond encoding (bolt's putTime, pgstore's UnixNano), so the ledger
// keeps another time: the bolt voter's LastVote becomes 2169 (the 1000 vote
// read back), every later vote is "late", and the streak and month never
// move again. sanitize must refuse it or treat it as missing. (A webhook
// vote that old is now dropped as expired on arrival, 3111948; the history
// path still counts it.)
func TestReviewAncientHistoryVote(t *testing.T) {
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
	p := startPoller(t, src, voterewards.Config{Store: s, OnReward: func(context.Context, voterewards.Vote) error { return nil }})
	var st voterewards.Stats
	require.Eventually(t, func() bool {
		st, err = p.Stats(ctx, user)
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

// TestReviewControlCharactersInIDs: Discord and Top.gg ids are numbers; an
// id holding a control character or invalid UTF-8 is stored by bolt but
// fails PostgreSQL's text (NUL, bad UTF-8: the whole Ingest fails on every
// retry) and splits pgstore's feed payloads ("\n"). checkIDs should refuse
// it (ErrInvalidVote) so that every store sees the same votes.
func TestReviewControlCharactersInIDs(t *testing.T) {
	ctx := context.Background()
	p := reviewPoller(t)
	now := time.Now().UTC()
	for _, id := range []string{"3\x00001", "3\n001", "3\xff001"} {
		err := p.IngestWebhook(ctx, webhook.Vote{Version: 1, ID: "v" + id, PlatformID: id, Weight: 1, CreatedAt: now, ExpiresAt: now.Add(voterewards.VoteLifetime)})
		assert.ErrorIs(t, err, voterewards.ErrInvalidVote, "%q", id)
	}
}

// historyNever is a History the tests never poll.
type historyNever struct{}

func (historyNever) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	return nil, nil
}

// TestLedgerStatsOfNoUser: no voter has the id "": asking for its ledger is
// a caller's field left empty, an error from every store and the Poller, not
// a zero Stats that looks like a voter who never voted.
func TestLedgerStatsOfNoUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bolt, err := boltstate.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = bolt.Close() })
	for name, s := range map[string]voterewards.Store{"memory": voterewards.NewMemoryStore(), "bolt": bolt} {
		st, err := s.Stats(ctx, "")
		require.ErrorIs(t, err, topgg.ErrNilArgument, name)
		assert.Zero(t, st, name)
		p, err := voterewards.New(historyNever{}, voterewards.Config{Store: s, OnReward: func(context.Context, voterewards.Vote) error { return nil }})
		require.NoError(t, err)
		_, err = p.Stats(ctx, "")
		assert.ErrorIs(t, err, topgg.ErrNilArgument, "%s, through the Poller", name)
	}
}

// TestLedgerStreakGraceForever: a bot that wants streaks never to break sets
// StreakGrace to the longest Duration. StreakUntil then lies past 2262,
// which the bolt file's nanosecond times cannot hold (it read back in 1733:
// every vote restarted the streak); the bolt store keeps the last instant
// they can, so that it counts the same streaks as the memory store.
func TestLedgerStreakGraceForever(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bolt, err := boltstate.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = bolt.Close() })
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const forever = time.Duration(math.MaxInt64)
	for name, s := range map[string]voterewards.Store{"memory": voterewards.NewMemoryStore(), "bolt": bolt} {
		for i := range 3 {
			c := created.Add(time.Duration(i) * 30 * 24 * time.Hour) // a month apart: only the grace keeps the streak
			v := voterewards.Vote{Vote: topgg.Vote{PlatformID: "1", Weight: 1, CreatedAt: c, ExpiresAt: c.Add(voterewards.VoteLifetime)}, Origin: voterewards.OriginHistory}
			added, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, forever)
			require.NoError(t, err, name)
			require.Len(t, added, 1, name)
			assert.Equal(t, i+1, added[0].Stats.Streak, "%s: vote %d", name, i)
		}
		st, err := s.Stats(ctx, "1")
		require.NoError(t, err, name)
		assert.Equal(t, 3, st.Streak, name)
		assert.Equal(t, 3, st.CurrentStreak(created.AddDate(200, 0, 0)), "%s: the streak still runs 200 years on", name)
	}
}

// TestLedgerReadsOfUnmadeValues: the ledger's reads on a Poller or
// boltstate.State not made by their constructors (zero, nil) return
// topgg.ErrNotConfigured, and a closed State an error: never a panic.
func TestLedgerReadsOfUnmadeValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	closed, err := boltstate.Open(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	var nilPoller *voterewards.Poller
	var nilBolt *boltstate.State
	readers := map[string]interface {
		Stats(context.Context, string) (voterewards.Stats, error)
		Leaderboard(context.Context, time.Time, int) ([]voterewards.Standing, error)
	}{"zero Poller": &voterewards.Poller{}, "nil Poller": nilPoller, "zero State": &boltstate.State{}, "nil State": nilBolt, "closed State": closed}
	for name, r := range readers {
		assert.NotPanics(t, func() {
			_, err := r.Stats(ctx, "1")
			assert.Error(t, err, "%s: Stats", name)
			_, err = r.Leaderboard(ctx, time.Time{}, 10)
			assert.Error(t, err, "%s: Leaderboard", name)
			if name != "closed State" {
				assert.ErrorIs(t, err, topgg.ErrNotConfigured, name)
			}
		}, name)
	}
}
