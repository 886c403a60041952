package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// The suite's cases of the ledger: every store must count votes exactly as
// [voterewards.Stats.Add] does, in the atomic step that admits them, and rank
// them as [voterewards.CompareStandings] does.

const grace = voterewards.DefaultStreakGrace

// lvote makes a sanitized vote of voter u (platform id) with weight w.
func lvote(u int, created time.Time, w int) voterewards.Vote {
	v := vote(u, created, voterewards.OriginHistory)
	v.Weight = w
	return v
}

// voter is the ledger id of vote(u, ...).
func voter(u int) string { return fmt.Sprintf("3%017d", u) }

// fold is the rule: Stats.Add over votes, in order.
func fold(votes ...voterewards.Vote) voterewards.Stats {
	var s voterewards.Stats
	for _, v := range votes {
		s = s.Add(v, grace)
	}
	return s
}

func stats(t *testing.T, s voterewards.Store, user string) voterewards.Stats {
	t.Helper()
	st, err := s.Stats(context.Background(), user)
	require.NoError(t, err)
	return st
}

func board(t *testing.T, s voterewards.Store, month time.Time, n int) []voterewards.Standing {
	t.Helper()
	b, err := s.Leaderboard(context.Background(), month, n)
	require.NoError(t, err)
	return b
}

// The asserts compare times in UTC, which drops the location and the
// monotonic reading: a store may decode times any way that keeps the instant.

func assertStats(t *testing.T, want, got voterewards.Stats, msgAndArgs ...any) {
	t.Helper()
	for _, s := range []*voterewards.Stats{&want, &got} {
		s.StreakUntil, s.Month, s.LastVote = s.StreakUntil.UTC(), s.Month.UTC(), s.LastVote.UTC()
	}
	assert.Equal(t, want, got, msgAndArgs...)
}

func assertBoard(t *testing.T, want, got []voterewards.Standing, msgAndArgs ...any) {
	t.Helper()
	utc := func(b []voterewards.Standing) []voterewards.Standing {
		b = slices.Clone(b)
		for i := range b {
			b[i].ReachedAt = b[i].ReachedAt.UTC()
		}
		return b
	}
	assert.Equal(t, utc(want), utc(got), msgAndArgs...)
}

// counts is a Stats without its times, for checks that spell the numbers out.
type counts struct{ votes, total, streak, best, monthVotes, monthTotal int }

func countsOf(s voterewards.Stats) counts {
	return counts{s.Votes, s.Total, s.Streak, s.BestStreak, s.MonthVotes, s.MonthTotal}
}

// testStreakEdge: a vote exactly at StreakUntil continues the streak; one
// nanosecond later starts a new one.
func testStreakEdge(t *testing.T, s voterewards.State) {
	first := lvote(1, base, 1)
	until := first.ExpiresAt.Add(grace)
	added := ingest(t, s, nil, first)
	require.Len(t, added, 1)
	assert.True(t, until.Equal(added[0].Stats.StreakUntil), "StreakUntil is ExpiresAt plus the grace")

	onTime := lvote(1, until, 1)
	added = ingest(t, s, nil, onTime)
	require.Len(t, added, 1)
	assert.Equal(t, 2, added[0].Stats.Streak, "a vote exactly at StreakUntil continues the streak")
	assertStats(t, fold(first, onTime), stats(t, s, voter(1)))

	other := lvote(2, base, 1)
	late := lvote(2, until.Add(time.Nanosecond), 1)
	ingest(t, s, nil, other, late)
	got := stats(t, s, voter(2))
	assert.Equal(t, counts{votes: 2, total: 2, streak: 1, best: 1, monthVotes: 2, monthTotal: 2}, countsOf(got), "a nanosecond after StreakUntil starts a new streak")
	assertStats(t, fold(other, late), got)

	again := lvote(2, late.ExpiresAt.Add(grace), 1)
	ingest(t, s, nil, again)
	assert.Equal(t, counts{votes: 3, total: 3, streak: 2, best: 2, monthVotes: 3, monthTotal: 3}, countsOf(stats(t, s, voter(2))), "the new streak continues")
}

// testWeekendWeight: a weight-2 vote counts 2 in Total and MonthTotal, 1
// in Votes, MonthVotes and the streak.
func testWeekendWeight(t *testing.T, s voterewards.State) {
	a, b := lvote(1, base, 2), lvote(1, base.Add(24*time.Hour), 1)
	ingest(t, s, nil, a)
	assert.Equal(t, counts{votes: 1, total: 2, streak: 1, best: 1, monthVotes: 1, monthTotal: 2}, countsOf(stats(t, s, voter(1))))
	ingest(t, s, nil, b)
	got := stats(t, s, voter(1))
	assert.Equal(t, counts{votes: 2, total: 3, streak: 2, best: 2, monthVotes: 2, monthTotal: 3}, countsOf(got), "a weekend vote is one step of a streak")
	assertStats(t, fold(a, b), got)
	assertBoard(t, []voterewards.Standing{{UserID: voter(1), Votes: 2, Total: 3, ReachedAt: b.CreatedAt}}, board(t, s, base, 10))
}

// testLateVote: a vote older than LastVote (the history delivering what a
// webhook missed) counts in the totals and its own month, not in the
// streak.
func testLateVote(t *testing.T, s voterewards.State) {
	a := lvote(1, base, 1)                            // March 1, 12:00
	b := lvote(1, base.Add(30*time.Hour), 2)          // March 2, 18:00: streak 2
	sameMonth := lvote(1, base.Add(15*time.Hour), 1)  // March 2, 03:00: late, same month
	lastMonth := lvote(1, base.Add(-24*time.Hour), 2) // February 28: late, its own month
	ingest(t, s, nil, a, b)
	before := stats(t, s, voter(1))
	require.Equal(t, 2, before.Streak)

	added := ingest(t, s, nil, sameMonth)
	require.Len(t, added, 1)
	got := stats(t, s, voter(1))
	assertStats(t, got, added[0].Stats, "the vote carries the Stats it made")
	assert.Equal(t, counts{votes: 3, total: 4, streak: 2, best: 2, monthVotes: 3, monthTotal: 4}, countsOf(got), "counted in its month, the current one; the streak untouched")
	assert.True(t, before.StreakUntil.Equal(got.StreakUntil))
	assert.True(t, b.CreatedAt.Equal(got.LastVote), "LastVote stays the newest")

	ingest(t, s, nil, lastMonth)
	got = stats(t, s, voter(1))
	assert.Equal(t, counts{votes: 4, total: 6, streak: 2, best: 2, monthVotes: 3, monthTotal: 4}, countsOf(got), "a vote of an earlier month leaves this month's count")
	assertStats(t, fold(a, b, sameMonth, lastMonth), got)
	assertBoard(t, []voterewards.Standing{{UserID: voter(1), Votes: 1, Total: 2, ReachedAt: lastMonth.CreatedAt}},
		board(t, s, lastMonth.CreatedAt, 10), "the late vote is on its month's board")
	assertBoard(t, []voterewards.Standing{{UserID: voter(1), Votes: 3, Total: 4, ReachedAt: b.CreatedAt}},
		board(t, s, base, 10), "a late vote does not move ReachedAt back")
	assertBoard(t, []voterewards.Standing{{UserID: voter(1), Votes: 4, Total: 6, ReachedAt: b.CreatedAt}},
		board(t, s, time.Time{}, 10))
}

// testLateVotesOfPastMonths: late votes land on their own months' boards,
// added to what those months held, however many months back.
func testLateVotesOfPastMonths(t *testing.T, s voterewards.State) {
	day := 24 * time.Hour
	feb27 := time.Date(2026, 2, 27, 12, 0, 0, 0, time.UTC)
	ingest(t, s, nil, lvote(1, feb27, 2), lvote(1, feb27.Add(2*day), 1), lvote(1, feb27.Add(3*day), 1)) // Feb 27, Mar 1, Mar 2
	ingest(t, s, nil, lvote(2, feb27, 1))
	late := []voterewards.Vote{lvote(1, feb27.Add(day), 1), lvote(1, feb27.Add(-36*time.Hour), 2), lvote(1, feb27.Add(-40*day), 1)} // Feb 28, Feb 26, Jan 18
	for _, v := range late {
		require.Len(t, ingest(t, s, nil, v), 1)
	}
	assertBoard(t, []voterewards.Standing{
		{UserID: voter(1), Votes: 3, Total: 5, ReachedAt: feb27.Add(day)},
		{UserID: voter(2), Votes: 1, Total: 1, ReachedAt: feb27},
	}, board(t, s, feb27, 10), "February: its votes, late ones included")
	assertBoard(t, []voterewards.Standing{{UserID: voter(1), Votes: 2, Total: 2, ReachedAt: feb27.Add(3 * day)}}, board(t, s, feb27.Add(3*day), 10), "March")
	assertBoard(t, []voterewards.Standing{{UserID: voter(1), Votes: 1, Total: 1, ReachedAt: late[2].CreatedAt}}, board(t, s, late[2].CreatedAt, 10), "January")
	got := stats(t, s, voter(1))
	// March's month counts; Feb 27 to Mar 1 is 48 h: the streak restarted on Mar 1.
	assert.Equal(t, counts{votes: 6, total: 8, streak: 2, best: 2, monthVotes: 2, monthTotal: 2}, countsOf(got))
	assertStats(t, fold(append([]voterewards.Vote{lvote(1, feb27, 2), lvote(1, feb27.Add(2*day), 1), lvote(1, feb27.Add(3*day), 1)}, late...)...), got)
}

// testMonthBoundary: months are UTC calendar months, to the nanosecond.
func testMonthBoundary(t *testing.T, s voterewards.State) {
	april := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	last := lvote(1, april.Add(-time.Nanosecond), 1) // March 31, 23:59:59.999999999
	first := lvote(2, april, 2)
	next := lvote(1, april.Add(12*time.Hour), 1) // user 1 again, in April
	ingest(t, s, nil, last, first)
	got := stats(t, s, voter(1))
	assert.True(t, got.Month.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), "the last nanosecond of March is March: %v", got.Month)
	assert.True(t, stats(t, s, voter(2)).Month.Equal(april))

	ingest(t, s, nil, next)
	got = stats(t, s, voter(1))
	assert.True(t, got.Month.Equal(april))
	assert.Equal(t, 1, got.MonthVotes, "a new month starts a new count")
	assert.Equal(t, 2, got.Streak, "a streak goes on across months")
	assertStats(t, fold(last, next), got)

	march := []voterewards.Standing{{UserID: voter(1), Votes: 1, Total: 1, ReachedAt: last.CreatedAt}}
	assertBoard(t, march, board(t, s, april.Add(-time.Nanosecond), 10))
	assertBoard(t, march, board(t, s, time.Date(2026, 3, 15, 8, 0, 0, 0, time.UTC), 10), "any instant of the month names it")
	// 01:00 on April 1 at UTC+2 is 23:00 on March 31 in UTC.
	assertBoard(t, march, board(t, s, time.Date(2026, 4, 1, 1, 0, 0, 0, time.FixedZone("UTC+2", 2*3600)), 10), "the month is UTC's")
	assertBoard(t, []voterewards.Standing{
		{UserID: voter(2), Votes: 1, Total: 2, ReachedAt: first.CreatedAt},
		{UserID: voter(1), Votes: 1, Total: 1, ReachedAt: next.CreatedAt},
	}, board(t, s, april, 10))
}

// testLeaderboardOrder: Total descending, then who reached it first, then
// the user id; n outside 1..MaxLeaderboard is ErrBadLeaderboard, and an
// empty board is empty.
func testLeaderboardOrder(t *testing.T, s voterewards.State) {
	for _, n := range []int{0, -1, voterewards.MaxLeaderboard + 1} {
		b, err := s.Leaderboard(context.Background(), time.Time{}, n)
		require.ErrorIs(t, err, voterewards.ErrBadLeaderboard, "n=%d", n)
		assert.Empty(t, b)
		_, err = s.Leaderboard(context.Background(), base, n)
		require.ErrorIs(t, err, voterewards.ErrBadLeaderboard, "n=%d, a month", n)
	}
	assert.Empty(t, board(t, s, time.Time{}, voterewards.MaxLeaderboard), "no votes yet")
	assert.Empty(t, board(t, s, base, 1))
	day := 24 * time.Hour
	// Four voters reach a total of 4 (two reach it at the same instant),
	// one reaches 2, one 1; the list goes in shuffled.
	votes := []voterewards.Vote{
		lvote(5, base, 1),
		lvote(1, base, 2), lvote(1, base.Add(2*day), 2), // 4, reached at +2d
		lvote(3, base, 1), lvote(3, base.Add(day), 1), lvote(3, base.Add(2*day), 1), lvote(3, base.Add(3*day), 1), // 4 at +3d
		lvote(2, base, 2), lvote(2, base.Add(day), 2), // 4 at +1d
		lvote(4, base, 2),
		lvote(6, base.Add(-day), 2), lvote(6, base.Add(day), 2), // 4 at +1d, id after user 2's
	}
	ingest(t, s, nil, votes...)
	want := []voterewards.Standing{
		{UserID: voter(2), Votes: 2, Total: 4, ReachedAt: base.Add(day)},
		{UserID: voter(6), Votes: 2, Total: 4, ReachedAt: base.Add(day)},
		{UserID: voter(1), Votes: 2, Total: 4, ReachedAt: base.Add(2 * day)},
		{UserID: voter(3), Votes: 4, Total: 4, ReachedAt: base.Add(3 * day)},
		{UserID: voter(4), Votes: 1, Total: 2, ReachedAt: base},
		{UserID: voter(5), Votes: 1, Total: 1, ReachedAt: base},
	}
	assertBoard(t, want, board(t, s, time.Time{}, voterewards.MaxLeaderboard), "all time")
	for n := 1; n <= len(want); n++ {
		assertBoard(t, want[:n], board(t, s, time.Time{}, n), "top %d", n)
	}
	// In March, user 6 has 2 (the February vote is not March's).
	march := []voterewards.Standing{want[0], want[2], want[3], want[4], {UserID: voter(6), Votes: 1, Total: 2, ReachedAt: base.Add(day)}, want[5]}
	assertBoard(t, march, board(t, s, base, 10), "March")
}

// testLeaderboardMonths: each month's board counts its votes only; all
// time counts all; a month without votes is empty.
func testLeaderboardMonths(t *testing.T, s voterewards.State) {
	jan, feb, mar := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	ingest(t, s, nil, lvote(1, jan, 2), lvote(2, jan.Add(24*time.Hour), 1))
	ingest(t, s, nil, lvote(2, feb, 2), lvote(2, feb.Add(24*time.Hour), 2))
	ingest(t, s, nil, lvote(1, mar, 1))
	assertBoard(t, []voterewards.Standing{
		{UserID: voter(1), Votes: 1, Total: 2, ReachedAt: jan},
		{UserID: voter(2), Votes: 1, Total: 1, ReachedAt: jan.Add(24 * time.Hour)},
	}, board(t, s, jan, 10), "January")
	assertBoard(t, []voterewards.Standing{{UserID: voter(2), Votes: 2, Total: 4, ReachedAt: feb.Add(24 * time.Hour)}}, board(t, s, feb, 10), "February")
	assertBoard(t, []voterewards.Standing{{UserID: voter(1), Votes: 1, Total: 1, ReachedAt: mar}}, board(t, s, mar, 10), "March")
	assert.Empty(t, board(t, s, time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC), 10), "December")
	assert.Empty(t, board(t, s, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), 10), "April")
	assertBoard(t, []voterewards.Standing{
		{UserID: voter(2), Votes: 3, Total: 5, ReachedAt: feb.Add(24 * time.Hour)},
		{UserID: voter(1), Votes: 2, Total: 3, ReachedAt: mar},
	}, board(t, s, time.Time{}, 10), "all time")
}

func testUnknownUser(t *testing.T, s voterewards.State) {
	assertStats(t, voterewards.Stats{UserID: "nobody"}, stats(t, s, "nobody"), "a voter never seen: zero, User set")
	ingest(t, s, nil, lvote(1, base, 1))
	assertStats(t, voterewards.Stats{UserID: voter(2)}, stats(t, s, voter(2)))
	only := userOnly(vote(3, base, voterewards.OriginHistory))
	ingest(t, s, nil, only)
	assertStats(t, fold(only), stats(t, s, only.UserID), "without a platform id the ledger keys on the user id")
	_, err := s.Stats(context.Background(), "")
	assert.ErrorIs(t, err, topgg.ErrNilArgument, "Stats of no user is misuse")
}

// testStatsKept: Ingest returns each added vote with its Stats, and Load
// returns them on pending votes and expiries.
func testStatsKept(t *testing.T, s voterewards.State) {
	ctx := context.Background()
	a, b, c := lvote(1, base, 2), lvote(1, base.Add(20*time.Hour), 1), lvote(2, base, 1)
	added := ingest(t, s, nil, a, b, a, c)
	require.Equal(t, keys(a, b, c), keys(added...))
	want := map[string]voterewards.Stats{a.Key(): fold(a), b.Key(): fold(a, b), c.Key(): fold(c)}
	for _, v := range added {
		assertStats(t, want[v.Key()], v.Stats, "Ingest's %s", v.Key())
	}
	assertStats(t, fold(a, b), stats(t, s, voter(1)))
	require.NoError(t, s.Delivered(ctx, added[0], true))
	require.NoError(t, s.Delivered(ctx, added[2], false))
	snap := load(t, s)
	require.Equal(t, keys(b), keys(snap.Pending...))
	assertStats(t, want[b.Key()], snap.Pending[0].Stats, "a pending vote keeps its Stats")
	require.Equal(t, keys(a), keys(snap.Expiries...))
	assertStats(t, want[a.Key()], snap.Expiries[0].Stats, "an expiry keeps its Stats")
}

// testLedgerConcurrentOneUser races distinct votes of one voter: none is
// lost from the counts (a read-modify-write of the ledger outside the
// admitting step would lose some).
func testLedgerConcurrentOneUser(t *testing.T, s voterewards.State) {
	const callers = 16
	atOnce(callers, func(i int) {
		v := lvote(1, base.Add(time.Duration(i)*24*time.Hour), 1+i%2)
		_, err := s.Ingest(context.Background(), nil, []voterewards.Vote{v}, grace)
		assert.NoError(t, err)
	})
	got := stats(t, s, voter(1))
	assert.Equal(t, callers, got.Votes)
	assert.Equal(t, callers*3/2, got.Total)
	assert.Equal(t, callers, got.MonthVotes)
	assertBoard(t, []voterewards.Standing{{UserID: voter(1), Votes: callers, Total: callers * 3 / 2, ReachedAt: base.Add((callers - 1) * 24 * time.Hour)}}, board(t, s, base, 10))
}

// userOnly makes a vote carry no platform id (the ledger keys on UserID).
func userOnly(v voterewards.Vote) voterewards.Vote {
	v.PlatformID = ""
	return v
}
