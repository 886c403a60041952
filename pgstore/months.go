package pgstore

import (
	"cmp"
	"slices"

	"github.com/dblkit/go-topgg/voterewards"
)

// adds are what one transaction adds: the votes, with their Stats, and the
// rows they add to voter_past_months.
type adds struct {
	votes  []voterewards.Vote
	months map[monthKey]voterewards.Standing
}

// monthKey is a voter's month (Unix nanoseconds), a row of voter_past_months.
type monthKey struct {
	month int64
	voter string
}

// count notes v, added to its voter id's ledger st (the one before it). A
// voter's newest month is its ledger row's (schema version 5): voter_past_months
// gets the month a vote turns from, and a late vote's older month.
func (a *adds) count(id string, st voterewards.Stats, v voterewards.Vote) {
	a.votes = append(a.votes, v)
	m := voterewards.MonthOf(v.CreatedAt)
	switch {
	case st.Votes == 0 || m.Equal(st.Month):
	case m.After(st.Month):
		a.addMonth(monthKey{st.Month.UnixNano(), id}, voterewards.Standing{Votes: st.MonthVotes, Total: st.MonthTotal, ReachedAt: st.LastVote})
	default:
		a.addMonth(monthKey{m.UnixNano(), id}, voterewards.Standing{Votes: 1, Total: max(v.Weight, 1), ReachedAt: v.CreatedAt})
	}
}

// addMonth adds s to the row k adds (one row a key: an upsert may not touch a row twice).
func (a *adds) addMonth(k monthKey, s voterewards.Standing) {
	if a.months == nil {
		a.months = map[monthKey]voterewards.Standing{}
	}
	if o, ok := a.months[k]; ok {
		s.Votes, s.Total = s.Votes+o.Votes, s.Total+o.Total
		if o.ReachedAt.After(s.ReachedAt) {
			s.ReachedAt = o.ReachedAt
		}
	}
	a.months[k] = s
}

// monthArgs returns the arguments of queries.addMonths, in key order.
func (a *adds) monthArgs() []any {
	keys := make([]monthKey, 0, len(a.months))
	for k := range a.months {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y monthKey) int { return cmp.Or(cmp.Compare(x.month, y.month), cmp.Compare(x.voter, y.voter)) })
	month, votes, total, reached := make([]int64, len(keys)), make([]int32, len(keys)), make([]int64, len(keys)), make([]int64, len(keys))
	voters := make([]string, len(keys))
	for i, k := range keys {
		s := a.months[k]
		month[i], voters[i], votes[i], total[i], reached[i] = k.month, k.voter, int32(s.Votes), int64(s.Total), s.ReachedAt.UnixNano()
	}
	return []any{month, voters, votes, total, reached}
}
