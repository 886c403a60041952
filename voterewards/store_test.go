package voterewards_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterewards/storetest"
)

// ledgerVote is a vote of voter "u1" created at created, with weight w.
func ledgerVote(created time.Time, w int) voterewards.Vote {
	return voterewards.Vote{Vote: topgg.Vote{
		UserID: "u1", Weight: w, CreatedAt: created, ExpiresAt: created.Add(voterewards.VoteLifetime),
	}, Origin: voterewards.OriginHistory}
}

func TestStatsAddFirstVote(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 7, 10, 0, 0, 0, time.UTC)
	got := voterewards.Stats{}.Add(ledgerVote(at, 2), time.Hour)
	assert.Equal(t, voterewards.Stats{
		UserID: "u1", Votes: 1, Total: 2, Streak: 1, BestStreak: 1,
		StreakUntil: at.Add(voterewards.VoteLifetime + time.Hour),
		Month:       time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), MonthVotes: 1, MonthTotal: 2,
		LastVote: at,
	}, got)
	zero := voterewards.Stats{}.Add(ledgerVote(at, 0), time.Hour)
	assert.Equal(t, 1, zero.Total, "a weight below 1 counts 1")
}

func TestStatsAddStreakEdge(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 7, 10, 0, 0, 0, time.UTC)
	first := voterewards.Stats{}.Add(ledgerVote(at, 1), voterewards.DefaultStreakGrace)
	until := at.Add(voterewards.VoteLifetime + voterewards.DefaultStreakGrace)
	require.True(t, until.Equal(first.StreakUntil))

	on := first.Add(ledgerVote(until, 1), voterewards.DefaultStreakGrace)
	assert.Equal(t, 2, on.Streak, "at StreakUntil: continues")
	assert.Equal(t, 2, on.BestStreak)
	after := first.Add(ledgerVote(until.Add(time.Nanosecond), 1), voterewards.DefaultStreakGrace)
	assert.Equal(t, 1, after.Streak, "a nanosecond later: a new streak")
	assert.Equal(t, 1, after.BestStreak)

	best := on.Add(ledgerVote(until.Add(5*24*time.Hour), 1), voterewards.DefaultStreakGrace)
	assert.Equal(t, 1, best.Streak)
	assert.Equal(t, 2, best.BestStreak, "BestStreak keeps the longest run")
	assert.Equal(t, 3, best.Votes)
}

func TestStatsAddLateVote(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s := voterewards.Stats{}.Add(ledgerVote(at, 1), voterewards.DefaultStreakGrace)
	s = s.Add(ledgerVote(at.Add(24*time.Hour), 1), voterewards.DefaultStreakGrace)
	late := s.Add(ledgerVote(at.Add(12*time.Hour), 2), voterewards.DefaultStreakGrace)
	assert.Equal(t, 3, late.Votes)
	assert.Equal(t, 4, late.Total)
	assert.Equal(t, 3, late.MonthVotes)
	assert.Equal(t, s.Streak, late.Streak, "a late vote leaves the streak")
	assert.Equal(t, s.StreakUntil, late.StreakUntil)
	assert.Equal(t, s.LastVote, late.LastVote)

	prev := s.Add(ledgerVote(at.Add(-48*time.Hour), 2), voterewards.DefaultStreakGrace) // February
	assert.Equal(t, 3, prev.Votes)
	assert.Equal(t, 4, prev.Total)
	assert.Equal(t, s.Month, prev.Month, "a late vote of an earlier month leaves Month")
	assert.Equal(t, 2, prev.MonthVotes)
	assert.Equal(t, 2, prev.MonthTotal)
}

func TestStatsAddMonthBoundary(t *testing.T) {
	t.Parallel()
	april := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	s := voterewards.Stats{}.Add(ledgerVote(april.Add(-time.Nanosecond), 2), voterewards.DefaultStreakGrace)
	assert.Equal(t, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), s.Month)
	s = s.Add(ledgerVote(april.Add(12*time.Hour), 1), voterewards.DefaultStreakGrace)
	assert.Equal(t, april, s.Month)
	assert.Equal(t, 1, s.MonthVotes)
	assert.Equal(t, 1, s.MonthTotal)
	assert.Equal(t, 2, s.Streak, "streaks cross months")
	assert.Equal(t, 3, s.Total)
}

func TestStatsCurrentStreak(t *testing.T) {
	t.Parallel()
	assert.Zero(t, voterewards.Stats{}.CurrentStreak(time.Now()), "no votes")
	at := time.Date(2026, 3, 7, 10, 0, 0, 0, time.UTC)
	s := voterewards.Stats{}.Add(ledgerVote(at, 1), voterewards.DefaultStreakGrace)
	s = s.Add(ledgerVote(at.Add(24*time.Hour), 1), voterewards.DefaultStreakGrace)
	assert.Equal(t, 2, s.CurrentStreak(at.Add(24*time.Hour)))
	assert.Equal(t, 2, s.CurrentStreak(s.StreakUntil), "until the last instant")
	assert.Zero(t, s.CurrentStreak(s.StreakUntil.Add(time.Nanosecond)), "over after")
}

func TestStatsThisMonth(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)
	s := voterewards.Stats{}.Add(ledgerVote(at, 2), voterewards.DefaultStreakGrace)
	votes, total := s.ThisMonth(at.Add(59 * time.Minute))
	assert.Equal(t, [2]int{1, 2}, [2]int{votes, total})
	votes, total = s.ThisMonth(at.Add(time.Hour))
	assert.Equal(t, [2]int{0, 0}, [2]int{votes, total}, "April has no votes yet")
	// 00:30 on April 1 at UTC+2 is still March in UTC.
	votes, _ = s.ThisMonth(time.Date(2026, 4, 1, 0, 30, 0, 0, time.FixedZone("UTC+2", 2*3600)))
	assert.Equal(t, 1, votes, "months are UTC's")
	votes, _ = voterewards.Stats{}.ThisMonth(time.Time{})
	assert.Zero(t, votes)
}

func TestCompareStandings(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 7, 10, 0, 0, 0, time.UTC)
	a := voterewards.Standing{UserID: "b", Total: 5, ReachedAt: at}
	assert.Negative(t, voterewards.CompareStandings(a, voterewards.Standing{UserID: "a", Total: 4}), "higher total first")
	assert.Negative(t, voterewards.CompareStandings(a, voterewards.Standing{UserID: "a", Total: 5, ReachedAt: at.Add(1)}), "reached first")
	assert.Negative(t, voterewards.CompareStandings(a, voterewards.Standing{UserID: "c", Total: 5, ReachedAt: at}), "then by user")
	assert.Zero(t, voterewards.CompareStandings(a, a))
}

// TestStatsAddMonthOfTheZeroTime: the first month of the calendar starts at
// the zero time; its votes count in it like any month's (Add tells a first
// vote by Votes, not by a zero Month).
func TestStatsAddMonthOfTheZeroTime(t *testing.T) {
	t.Parallel()
	first := time.Date(1, 1, 10, 0, 0, 0, 0, time.UTC)
	var s voterewards.Stats
	for i := range 3 {
		s = s.Add(ledgerVote(first.Add(time.Duration(i)*24*time.Hour), 1), voterewards.DefaultStreakGrace)
	}
	assert.Equal(t, 3, s.Votes)
	assert.Equal(t, 3, s.MonthVotes, "every vote of the month counted in it")
	assert.Equal(t, 3, s.MonthTotal)
	assert.Equal(t, 3, s.Streak)
}

// historyNever is a History the tests never poll.
type historyNever struct{}

func (historyNever) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	return nil, nil
}

// TestLedgerStatsOfNoUser: no voter has the id "": asking for its ledger is
// a caller's field left empty, an error from every store, not
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

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(*testing.T) voterewards.State { return voterewards.NewMemoryStore() })
}

// TestMemoryStoreRefusesAFence: memory is one process's; a fleet's fence is
// refused, and none is fine.
func TestMemoryStoreRefusesAFence(t *testing.T) {
	t.Parallel()
	s := voterewards.NewMemoryStore()
	require.NoError(t, s.UseFence(nil))
	require.ErrorIs(t, s.UseFence(func() int64 { return 1 }), voterewards.ErrNotShared)
}
