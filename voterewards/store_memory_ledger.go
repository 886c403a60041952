package voterewards

import (
	"context"
	"slices"
	"time"
)

// memoryLedger is the memory store's ledger: every voter's Stats, and one board
// per month (all time reads the Stats); reads sort, fine for tests and small bots.
type memoryLedger struct {
	stats  map[string]Stats
	months map[time.Time]map[string]Standing
}

func newMemoryLedger() memoryLedger {
	return memoryLedger{stats: map[string]Stats{}, months: map[time.Time]map[string]Standing{}}
}

// add counts v and returns its voter's new Stats.
func (l memoryLedger) add(v Vote, grace time.Duration) Stats {
	id := voterID(v.Vote)
	st := l.stats[id].Add(v, grace)
	l.stats[id] = st
	m := MonthOf(v.CreatedAt)
	board := l.months[m]
	if board == nil {
		board = map[string]Standing{}
		l.months[m] = board
	}
	board[id] = standingAdd(board[id], id, v)
	return st
}

// standingAdd counts v in a voter's standing of one span.
func standingAdd(s Standing, user string, v Vote) Standing {
	s.UserID = user
	s.Votes++
	s.Total += max(v.Weight, 1)
	if v.CreatedAt.After(s.ReachedAt) {
		s.ReachedAt = v.CreatedAt
	}
	return s
}

// Stats implements [Store].
func (s *memoryStore) Stats(ctx context.Context, user string) (Stats, error) {
	if err := checkUser(user); err != nil {
		return Stats{}, err
	}
	if err := s.lock(ctx); err != nil {
		return Stats{}, err
	}
	defer s.mu.Unlock()
	st, ok := s.ledger.stats[user]
	if !ok {
		st.UserID = user
	}
	return st, nil
}

// Leaderboard implements [Store], keeping the top n as it walks: no full sort.
func (s *memoryStore) Leaderboard(ctx context.Context, month time.Time, n int) ([]Standing, error) {
	if err := checkLeaderboard(n); err != nil {
		return nil, err
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	top := topN{n: n}
	if month.IsZero() {
		for _, st := range s.ledger.stats {
			top.offer(Standing{UserID: st.UserID, Votes: st.Votes, Total: st.Total, ReachedAt: st.LastVote})
		}
	} else {
		for _, st := range s.ledger.months[MonthOf(month)] {
			top.offer(st)
		}
	}
	return top.list, nil
}

// topN keeps the first n standings offered, in CompareStandings order.
type topN struct {
	n    int
	list []Standing
}

func (t *topN) offer(s Standing) {
	if len(t.list) == t.n && CompareStandings(s, t.list[t.n-1]) >= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(t.list, s, CompareStandings)
	if len(t.list) == t.n {
		t.list = t.list[:t.n-1]
	}
	t.list = slices.Insert(t.list, i, s)
}
