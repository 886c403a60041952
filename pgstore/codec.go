package pgstore

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/voterewards"
)

// ns returns t as Unix nanoseconds, nil for the zero time; a time beyond
// their range is kept as the nearest instant in it, not wrapped around.
func ns(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := t.UnixNano()
	switch {
	case t.After(lastNS):
		n = math.MaxInt64
	case t.Before(firstNS):
		n = math.MinInt64
	}
	return &n
}

// firstNS and lastNS are the first and last instants Unix nanoseconds hold.
var firstNS, lastNS = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// fromNS is the inverse of [ns]: UTC, no monotonic reading.
func fromNS(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(0, *n).UTC()
}

// voterOf is the id a vote is deduplicated and counted on, as in voterewards.
func voterOf(v voterewards.Vote) string {
	if v.PlatformID != "" {
		return v.PlatformID
	}
	return v.UserID
}

// scanVote reads the columns of voteCols, after any given before them.
func scanVote(row pgx.Row, before ...any) (voterewards.Vote, error) {
	var (
		v                voterewards.Vote
		created, expires int64
		origin           int16
		hook, stats      []byte
	)
	dest := append(before, &v.UserID, &v.PlatformID, &v.Weight, &created, &expires, &origin, &hook, &stats)
	if err := row.Scan(dest...); err != nil {
		return v, err
	}
	v.CreatedAt, v.ExpiresAt = fromNS(&created), fromNS(&expires)
	v.Origin = voterewards.Origin(origin)
	if hook != nil {
		v.Hook = &voterewards.Hook{}
		if err := json.Unmarshal(hook, v.Hook); err != nil {
			return v, fmt.Errorf("vote %s: hook: %w", v.Key(), err)
		}
	}
	if err := json.Unmarshal(stats, &v.Stats); err != nil {
		return v, fmt.Errorf("vote %s: stats: %w", v.Key(), err)
	}
	return v, nil
}

// scanStats reads a ledger row (voter, votes, total, streak, best_streak,
// streak_until_ns, month_ns, month_votes, month_total, last_vote_ns).
func scanStats(row pgx.Row) (voterewards.Stats, error) {
	st, _, err := scanLedger(row, false)
	return st, err
}

// scanAdmit reads a row of admitRead: a ledger row (NULLs for a new voter:
// a zero Stats with User set) and the voter's creation times near the new ones.
func scanAdmit(row pgx.Row) (voterewards.Stats, []int64, error) {
	return scanLedger(row, true)
}

func scanLedger(row pgx.Row, withNear bool) (voterewards.Stats, []int64, error) {
	var (
		st                                    voterewards.Stats
		votes, streak, best, monthVotes       *int
		total, monthTotal, until, month, last *int64
		near                                  []int64
	)
	dest := []any{&st.UserID, &votes, &total, &streak, &best, &until, &month, &monthVotes, &monthTotal, &last}
	if withNear {
		dest = append(dest, &near)
	}
	err := row.Scan(dest...)
	st.Votes, st.Streak, st.BestStreak, st.MonthVotes = deref(votes), deref(streak), deref(best), deref(monthVotes)
	st.Total, st.MonthTotal = int(deref(total)), int(deref(monthTotal))
	st.StreakUntil, st.Month, st.LastVote = fromNS(until), fromNS(month), fromNS(last)
	return st, near, err
}

func deref[T int | int64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// voteArgs are the column arrays of votes for insertVotes.
type voteArgs struct {
	key, voter, userID, platformID []string
	weight                         []int
	created, expires               []int64
	origin                         []int16
	hook, stats                    [][]byte
}

func (a *voteArgs) add(v voterewards.Vote) error {
	var hook []byte
	if v.Hook != nil {
		b, err := json.Marshal(v.Hook)
		if err != nil {
			return err
		}
		hook = b
	}
	stats, err := json.Marshal(v.Stats)
	if err != nil {
		return err
	}
	a.key = append(a.key, v.Key())
	a.voter = append(a.voter, voterOf(v))
	a.userID = append(a.userID, v.UserID)
	a.platformID = append(a.platformID, v.PlatformID)
	a.weight = append(a.weight, v.Weight)
	a.created = append(a.created, v.CreatedAt.UnixNano())
	a.expires = append(a.expires, v.ExpiresAt.UnixNano())
	a.origin = append(a.origin, int16(v.Origin))
	a.hook = append(a.hook, hook)
	a.stats = append(a.stats, stats)
	return nil
}

func (a *voteArgs) args() []any {
	return []any{a.key, a.voter, a.userID, a.platformID, a.weight, a.created, a.expires, a.origin, jsonArray(a.hook), jsonArray(a.stats)}
}

// jsonArray passes JSON documents (nil: NULL) as a json[] parameter.
func jsonArray(docs [][]byte) []*string {
	out := make([]*string, len(docs))
	for i, d := range docs {
		if d != nil {
			s := string(d)
			out[i] = &s
		}
	}
	return out
}

// ledgerArgs are the column arrays of voters' Stats for upsertVoters.
type ledgerArgs struct {
	voter                           []string
	votes, streak, best, monthVotes []int
	total, monthTotal               []int64
	until, month, last              []*int64
}

func (a *ledgerArgs) add(st voterewards.Stats) {
	a.voter = append(a.voter, st.UserID)
	a.votes = append(a.votes, st.Votes)
	a.total = append(a.total, int64(st.Total))
	a.streak = append(a.streak, st.Streak)
	a.best = append(a.best, st.BestStreak)
	a.until = append(a.until, ns(st.StreakUntil))
	a.month = append(a.month, ns(st.Month))
	a.monthVotes = append(a.monthVotes, st.MonthVotes)
	a.monthTotal = append(a.monthTotal, int64(st.MonthTotal))
	a.last = append(a.last, ns(st.LastVote))
}

func (a *ledgerArgs) args() []any {
	return []any{a.voter, a.votes, a.total, a.streak, a.best, a.until, a.month, a.monthVotes, a.monthTotal, a.last}
}

// monthKey is one voter's standing in one month.
type monthKey struct {
	month int64
	voter string
}

// standingAdd counts v in a month's standing (as the memory store does).
func standingAdd(s voterewards.Standing, v voterewards.Vote) voterewards.Standing {
	s.Votes++
	s.Total += max(v.Weight, 1)
	if v.CreatedAt.After(s.ReachedAt) {
		s.ReachedAt = v.CreatedAt
	}
	return s
}
