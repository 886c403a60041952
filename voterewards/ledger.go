package voterewards

import (
	"cmp"
	"errors"
	"time"
)

// DefaultStreakGrace is the default [Config.StreakGrace]: a user who votes
// once a day, at any hour, keeps the streak.
const DefaultStreakGrace = 24 * time.Hour

// MaxLeaderboard is the most standings one [Store.Leaderboard] call returns.
const MaxLeaderboard = 1000

// ErrBadLeaderboard is returned by Leaderboard for n outside 1..[MaxLeaderboard].
var ErrBadLeaderboard = errors.New("voterewards: leaderboard size must be 1..1000")

// Stats is one voter's ledger, updated with [Stats.Add] in the atomic step
// that admits a vote (rules: the package doc's "The ledger"). A [Vote] given
// to a handler carries its voter's Stats as they stood right after it.
type Stats struct {
	// UserID is the voter's id: PlatformID, else the Top.gg user id.
	UserID string
	// Votes is the number of votes counted; Total the sum of their weights.
	Votes, Total int
	// Streak is the streak ending with LastVote (see [Stats.CurrentStreak]);
	// BestStreak the longest the voter had.
	Streak, BestStreak int
	// StreakUntil is the last instant a new vote continues Streak: the
	// newest vote's ExpiresAt plus the streak grace.
	StreakUntil time.Time
	// Month is the first instant of LastVote's UTC month; MonthVotes and
	// MonthTotal count the votes made in it (see [Stats.ThisMonth]).
	Month                  time.Time
	MonthVotes, MonthTotal int
	// LastVote is the CreatedAt of the newest vote counted.
	LastVote time.Time
}

// Add returns s with v counted, given the streak grace; every store applies
// it, and it reads no clock. s must be the ledger of v's voter (zero for a
// first vote), and v a vote not counted before.
func (s Stats) Add(v Vote, grace time.Duration) Stats {
	s.UserID = cmp.Or(s.UserID, voterID(v.Vote))
	w := max(v.Weight, 1)
	s.Votes++
	s.Total += w
	m := MonthOf(v.CreatedAt)
	switch {
	case s.Votes == 1 || m.After(s.Month): // a first vote: its month may be the zero time's
		s.Month, s.MonthVotes, s.MonthTotal = m, 1, w
	case m.Equal(s.Month):
		s.MonthVotes++
		s.MonthTotal += w
	}
	if s.Votes > 1 && v.CreatedAt.Before(s.LastVote) {
		return s // late: counted, streak untouched
	}
	if s.Votes > 1 && !v.CreatedAt.After(s.StreakUntil) {
		s.Streak++
	} else {
		s.Streak = 1
	}
	s.BestStreak = max(s.BestStreak, s.Streak)
	s.StreakUntil = v.ExpiresAt.Add(grace)
	s.LastVote = v.CreatedAt
	return s
}

// CurrentStreak returns Streak if a vote made at now would continue it, else 0.
func (s Stats) CurrentStreak(now time.Time) int {
	if s.Votes == 0 || now.After(s.StreakUntil) {
		return 0
	}
	return s.Streak
}

// ThisMonth returns the votes and the weighted total of now's UTC month.
func (s Stats) ThisMonth(now time.Time) (votes, total int) {
	if !s.Month.Equal(MonthOf(now)) {
		return 0, 0
	}
	return s.MonthVotes, s.MonthTotal
}

// MonthOf returns the first instant of t's UTC calendar month.
func MonthOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// Standing is one line of a leaderboard over its span (a month, or all time).
type Standing struct {
	UserID       string
	Votes, Total int
	// ReachedAt is the CreatedAt of the newest vote counted in the span.
	ReachedAt time.Time
}

// CompareStandings orders a leaderboard: higher Total first, then earlier
// ReachedAt, then UserID; the order is total and the same in every store.
func CompareStandings(a, b Standing) int {
	return cmp.Or(cmp.Compare(b.Total, a.Total), a.ReachedAt.Compare(b.ReachedAt), cmp.Compare(a.UserID, b.UserID))
}
