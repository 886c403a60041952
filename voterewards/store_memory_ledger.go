package voterewards

import (
	"context"
	"maps"
	"slices"
	"time"
)

// memoryLedger is the memory store's ledger: every voter's Stats, and one board
// per month (all time reads the Stats); reads sort, fine for tests and small bots.
type memoryLedger struct {
	stats  map[string]Stats
	months map[time.Time]map[string]Standing
}

// add counts v and returns its voter's new Stats.
func (l memoryLedger) add(v Vote, grace time.Duration) Stats {
	id := voterID(v.Vote)
	st := l.stats[id].Add(v, grace)
	l.stats[id] = st
	m := MonthOf(v.CreatedAt)
	if l.months[m] == nil {
		l.months[m] = map[string]Standing{}
	}
	s := l.months[m][id]
	s.UserID, s.Votes, s.Total = id, s.Votes+1, s.Total+max(v.Weight, 1)
	s.ReachedAt = later(s.ReachedAt, v.CreatedAt)
	l.months[m][id] = s
	return st
}

// Stats implements [Store].
func (s *memoryStore) Stats(ctx context.Context, user string) (st Stats, err error) {
	if err := checkUser(user); err != nil {
		return Stats{}, err
	}
	err = s.with(ctx, func() {
		st = s.ledger.stats[user]
		st.UserID = user
	})
	return st, err
}

// Leaderboard implements [Store].
func (s *memoryStore) Leaderboard(ctx context.Context, month time.Time, n int) (top []Standing, err error) {
	if err := checkLeaderboard(n); err != nil {
		return nil, err
	}
	err = s.with(ctx, func() {
		if month.IsZero() {
			for _, st := range s.ledger.stats {
				top = append(top, Standing{UserID: st.UserID, Votes: st.Votes, Total: st.Total, ReachedAt: st.LastVote})
			}
		} else {
			top = slices.Collect(maps.Values(s.ledger.months[MonthOf(month)]))
		}
		slices.SortFunc(top, CompareStandings)
		top = top[:min(n, len(top))]
	})
	return top, err
}
