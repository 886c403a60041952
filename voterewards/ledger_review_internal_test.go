package voterewards

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

// TestLedgerStatsOfNoUser: no voter has the id "": asking for its ledger is
// a caller's field left empty, an error from every store and the Poller, not
// a zero Stats that looks like a voter who never voted.
func TestLedgerStatsOfNoUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bolt, err := OpenStore(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = bolt.Close() })
	for name, s := range map[string]Store{"memory": NewMemoryStore(), "bolt": bolt} {
		st, err := s.Stats(ctx, "")
		require.ErrorIs(t, err, topgg.ErrNilArgument, name)
		assert.Zero(t, st, name)
		p, err := New(historyStub{}, Config{Store: s, OnReward: func(context.Context, Vote) error { return nil }})
		require.NoError(t, err)
		_, err = p.Stats(ctx, "")
		assert.ErrorIs(t, err, topgg.ErrNilArgument, "%s, through the Poller", name)
	}
}

// historyStub is a History never called: the tests only read the ledger.
type historyStub struct{}

func (historyStub) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	return &topgg.VotePage{}, nil
}

// TestLedgerStreakGraceForever: a bot that wants streaks never to break sets
// StreakGrace to the longest Duration. StreakUntil then lies past 2262,
// which the bolt file's nanosecond times cannot hold (it read back in 1733:
// every vote restarted the streak); the bolt store keeps the last instant
// they can, so that it counts the same streaks as the memory store.
func TestLedgerStreakGraceForever(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bolt, err := OpenStore(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = bolt.Close() })
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const forever = time.Duration(math.MaxInt64)
	for name, s := range map[string]Store{"memory": NewMemoryStore(), "bolt": bolt} {
		for i := range 3 {
			c := created.Add(time.Duration(i) * 30 * 24 * time.Hour) // a month apart: only the grace keeps the streak
			added, err := s.Ingest(ctx, nil, []Vote{newVote(topgg.Vote{PlatformID: "1", Weight: 1, CreatedAt: c, ExpiresAt: c.Add(VoteLifetime)})}, forever)
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
// BoltStore not made by their constructors (zero, nil) return
// topgg.ErrNotConfigured, and a closed BoltStore an error: never a panic.
func TestLedgerReadsOfUnmadeValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	closed, err := OpenStore(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	var nilPoller *Poller
	var nilBolt *BoltStore
	readers := map[string]interface {
		Stats(context.Context, string) (Stats, error)
		Leaderboard(context.Context, time.Time, int) ([]Standing, error)
	}{"zero Poller": &Poller{}, "nil Poller": nilPoller, "zero BoltStore": &BoltStore{}, "nil BoltStore": nilBolt, "closed BoltStore": closed}
	for name, r := range readers {
		assert.NotPanics(t, func() {
			_, err := r.Stats(ctx, "1")
			assert.Error(t, err, "%s: Stats", name)
			_, err = r.Leaderboard(ctx, time.Time{}, 10)
			assert.Error(t, err, "%s: Leaderboard", name)
			if name != "closed BoltStore" {
				assert.ErrorIs(t, err, topgg.ErrNotConfigured, name)
			}
		}, name)
	}
}
