package voterewards

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/dblkit/go-topgg/topgg"
)

// feedBuffer bounds the votes held for a slow follower, which then resyncs.
const feedBuffer = 4096

// memoryStore is the Store of NewMemoryStore.
type memoryStore struct {
	mu       sync.Mutex
	cp       Checkpoint
	seen     map[string]Vote
	byVoter  map[string][]time.Time // CreatedAt of the voter's votes in seen
	pending  map[string]Vote
	expiries map[string]Vote
	subs     map[*intake]struct{} // one per Follow call
	// The ledger: every voter's Stats, and one board per month (all time
	// reads the Stats); reads sort, fine for tests and small bots.
	stats  map[string]Stats
	months map[time.Time]map[string]Standing
	hash   string
	remind map[string]string // opted-in user -> key of the last vote reminded
}

var _ Feed = (*memoryStore)(nil)

// NewMemoryStore returns an empty [State] in memory, for tests and throwaway
// runs. It is safe for concurrent use and implements [Feed]: Pollers sharing
// one behave as a fleet.
func NewMemoryStore() State {
	return &memoryStore{
		seen: map[string]Vote{}, byVoter: map[string][]time.Time{},
		pending: map[string]Vote{}, expiries: map[string]Vote{}, subs: map[*intake]struct{}{},
		stats: map[string]Stats{}, months: map[time.Time]map[string]Standing{}, remind: map[string]string{},
	}
}

// with runs f under the store's lock, unless ctx is done.
func (s *memoryStore) with(ctx context.Context, f func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	return nil
}

// Load implements [Store].
func (s *memoryStore) Load(ctx context.Context) (snap *Snapshot, err error) {
	err = s.with(ctx, func() {
		snap = &Snapshot{
			Checkpoint: s.cp,
			Seen:       slices.Collect(maps.Values(s.seen)),
			Pending:    slices.Collect(maps.Values(s.pending)),
			Expiries:   slices.Collect(maps.Values(s.expiries)),
		}
	})
	return snap, err
}

// Ingest implements [Store].
func (s *memoryStore) Ingest(ctx context.Context, cp *Checkpoint, votes []Vote, grace time.Duration) (added []Vote, err error) {
	err = s.with(ctx, func() {
		for _, v := range votes {
			id := voterID(v.Vote)
			near := func(u time.Time) bool { d := u.Sub(v.CreatedAt); return d < DedupWindow && d > -DedupWindow }
			if slices.ContainsFunc(s.byVoter[id], near) {
				continue
			}
			s.byVoter[id] = append(s.byVoter[id], v.CreatedAt)
			v.Stats = s.count(v, grace)
			s.seen[v.Key()] = v
			s.pending[v.Key()] = v
			added = append(added, v)
		}
		if cp != nil {
			s.cp = *cp
		}
		for f := range s.subs {
			f.offer(added)
		}
	})
	return added, err
}

// Delivered implements [Store].
func (s *memoryStore) Delivered(ctx context.Context, v Vote, expire bool) error {
	return s.with(ctx, func() {
		delete(s.pending, v.Key())
		if expire {
			s.expiries[v.Key()] = v
		}
	})
}

// Expired implements [Store].
func (s *memoryStore) Expired(ctx context.Context, v Vote) error {
	return s.with(ctx, func() { delete(s.expiries, v.Key()) })
}

// Prune implements [Store].
func (s *memoryStore) Prune(ctx context.Context, createdBefore, now time.Time) error {
	return s.with(ctx, func() {
		for k, v := range s.seen {
			if !v.CreatedAt.Before(createdBefore) || v.ExpiresAt.After(now) {
				continue
			}
			delete(s.seen, k)
			id := voterID(v.Vote)
			if s.byVoter[id] = slices.DeleteFunc(s.byVoter[id], v.CreatedAt.Equal); len(s.byVoter[id]) == 0 {
				delete(s.byVoter, id)
			}
		}
	})
}

// Follow implements [Feed]; a follower that falls feedBuffer votes behind resyncs.
func (s *memoryStore) Follow(ctx context.Context, added func(Vote), resync func()) error {
	f := &intake{wake: make(chan struct{}, 1), max: feedBuffer}
	_ = s.with(context.Background(), func() { s.subs[f] = struct{}{} })
	defer func() { _ = s.with(context.Background(), func() { delete(s.subs, f) }) }()
	resync()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.wake:
		}
		votes, lost, _, _, _ := f.take()
		if lost {
			resync()
		}
		for _, v := range votes {
			added(v)
		}
	}
}

// Format prints "voterewards.MemoryStore" under every verb, never its state (racy, may hold secrets).
func (*memoryStore) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "voterewards.MemoryStore") }

// count adds v to the ledger and returns its voter's new Stats.
func (s *memoryStore) count(v Vote, grace time.Duration) Stats {
	id := voterID(v.Vote)
	st := s.stats[id].Add(v, grace)
	s.stats[id] = st
	m := MonthOf(v.CreatedAt)
	if s.months[m] == nil {
		s.months[m] = map[string]Standing{}
	}
	b := s.months[m][id]
	b.UserID, b.Votes, b.Total = id, b.Votes+1, b.Total+max(v.Weight, 1)
	b.ReachedAt = later(b.ReachedAt, v.CreatedAt)
	s.months[m][id] = b
	return st
}

// Stats implements [Store].
func (s *memoryStore) Stats(ctx context.Context, user string) (st Stats, err error) {
	if user == "" {
		return Stats{}, fmt.Errorf("voterewards: Stats: %w (an empty user id)", topgg.ErrNilArgument)
	}
	err = s.with(ctx, func() {
		st = s.stats[user]
		st.UserID = user
	})
	return st, err
}

// Leaderboard implements [Store].
func (s *memoryStore) Leaderboard(ctx context.Context, month time.Time, n int) (top []Standing, err error) {
	if n < 1 || n > MaxLeaderboard {
		return nil, ErrBadLeaderboard
	}
	err = s.with(ctx, func() {
		if month.IsZero() {
			for _, st := range s.stats {
				top = append(top, Standing{UserID: st.UserID, Votes: st.Votes, Total: st.Total, ReachedAt: st.LastVote})
			}
		} else {
			top = slices.Collect(maps.Values(s.months[MonthOf(month)]))
		}
		slices.SortFunc(top, CompareStandings)
		top = top[:min(n, len(top))]
	})
	return top, err
}

// UseFence implements [State]: memory is one process's.
func (s *memoryStore) UseFence(f Fence) error {
	if f != nil {
		return ErrNotShared
	}
	return nil
}

// Ping implements [State]: memory always answers.
func (s *memoryStore) Ping(ctx context.Context) error { return ctx.Err() }

// LoadHash implements [State].
func (s *memoryStore) LoadHash(ctx context.Context) (hash string, err error) {
	err = s.with(ctx, func() { hash = s.hash })
	return hash, err
}

// SaveHash implements [State].
func (s *memoryStore) SaveHash(ctx context.Context, hash string) error {
	return s.with(ctx, func() { s.hash = hash })
}

// SetReminder implements [ReminderStore].
func (s *memoryStore) SetReminder(ctx context.Context, userID string, on bool) error {
	return s.with(ctx, func() {
		if _, ok := s.remind[userID]; on && !ok {
			s.remind[userID] = ""
		} else if !on {
			delete(s.remind, userID)
		}
	})
}

// Reminder implements [ReminderStore].
func (s *memoryStore) Reminder(ctx context.Context, userID string) (on bool, last string, err error) {
	err = s.with(ctx, func() { last, on = s.remind[userID] })
	return on, last, err
}

// Reminded implements [ReminderStore].
func (s *memoryStore) Reminded(ctx context.Context, userID, key string) error {
	return s.with(ctx, func() {
		if _, on := s.remind[userID]; on {
			s.remind[userID] = key
		}
	})
}
