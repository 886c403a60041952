package pgstore

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
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

// keyParts returns the voter and the creation time (Unix nanoseconds) that a
// vote's key ([voterewards.Vote.Key]: voter, "@", RFC 3339 time) names, or
// false if key is not one.
func keyParts(key string) (string, int64, bool) {
	i := strings.LastIndexByte(key, '@')
	if i < 0 {
		return "", 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, key[i+1:])
	if err != nil || !nanoOK(t) {
		return "", 0, false
	}
	return key[:i], t.UnixNano(), true
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

// scanLedger reads a ledger row (voter, votes, total, streak, best_streak,
// streak_until_ns, month_ns, month_votes, month_total, last_vote_ns; NULLs
// for a new voter: a zero Stats with User set) and, withNear, admitRead's
// creation times of the voter's votes near the new ones.
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

// voteArgs are the column arrays of admitWrite: the votes and their Stats.
type voteArgs struct {
	key, voter, userID, platformID          []string
	weight, votes, streak, best, monthVotes []int
	created, expires, total, monthTotal     []int64
	origin                                  []int16
	hook, stats                             [][]byte
	until, month, last                      []*int64
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
	st := v.Stats
	a.key, a.voter = append(a.key, v.Key()), append(a.voter, st.UserID)
	a.userID, a.platformID = append(a.userID, v.UserID), append(a.platformID, v.PlatformID)
	a.weight, a.origin = append(a.weight, v.Weight), append(a.origin, int16(v.Origin))
	a.created, a.expires = append(a.created, v.CreatedAt.UnixNano()), append(a.expires, v.ExpiresAt.UnixNano())
	a.hook, a.stats = append(a.hook, hook), append(a.stats, stats)
	a.votes, a.total = append(a.votes, st.Votes), append(a.total, int64(st.Total))
	a.streak, a.best = append(a.streak, st.Streak), append(a.best, st.BestStreak)
	a.until, a.month, a.last = append(a.until, ns(st.StreakUntil)), append(a.month, ns(st.Month)), append(a.last, ns(st.LastVote))
	a.monthVotes, a.monthTotal = append(a.monthVotes, st.MonthVotes), append(a.monthTotal, int64(st.MonthTotal))
	return nil
}

func (a *voteArgs) args() []any {
	return []any{a.key, a.voter, a.userID, a.platformID, a.weight, a.created, a.expires, a.origin, jsonArray(a.hook), jsonArray(a.stats),
		a.votes, a.total, a.streak, a.best, a.until, a.month, a.monthVotes, a.monthTotal, a.last}
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
