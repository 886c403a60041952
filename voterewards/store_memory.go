package voterewards

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"
)

// feedBuffer bounds the votes held for a slow follower, which then resyncs.
const feedBuffer = 4096

// memoryStore is the Store of NewMemoryStore.
type memoryStore struct {
	mu       sync.Mutex
	cp       Checkpoint
	seen     map[string]Vote
	byVoter  map[string][]time.Time // CreatedAt of the voter's votes in seen
	order    []Vote                 // seen, as added: by creation time, but for late votes
	pending  map[string]Vote
	expiries map[string]Vote
	subs     map[*intake]struct{} // one per Follow call
	ledger   memoryLedger
	hash     string
	remind   map[string]string // opted-in user -> key of the last vote reminded
}

var _ Feed = (*memoryStore)(nil)

// NewMemoryStore returns an empty [State] in memory, for tests and throwaway
// runs. It is safe for concurrent use and implements [Feed]: Pollers sharing
// one behave as a fleet.
func NewMemoryStore() State {
	return &memoryStore{
		seen: map[string]Vote{}, byVoter: map[string][]time.Time{},
		pending: map[string]Vote{}, expiries: map[string]Vote{}, subs: map[*intake]struct{}{},
		ledger: memoryLedger{stats: map[string]Stats{}, months: map[time.Time]map[string]Standing{}},
		remind: map[string]string{},
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
			id := v.lane()
			near := func(u time.Time) bool { d := u.Sub(v.CreatedAt); return d < DedupWindow && d > -DedupWindow }
			if slices.ContainsFunc(s.byVoter[id], near) {
				continue
			}
			s.byVoter[id] = append(s.byVoter[id], v.CreatedAt)
			v.Stats = s.ledger.add(v, grace)
			s.seen[v.Key()] = v
			s.order = append(s.order, v)
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

// Prune implements [Store], stopping at the first vote added that must stay.
func (s *memoryStore) Prune(ctx context.Context, createdBefore, now time.Time) error {
	return s.with(ctx, func() {
		n := 0
		for _, v := range s.order {
			if !v.CreatedAt.Before(createdBefore) || v.ExpiresAt.After(now) {
				break
			}
			delete(s.seen, v.Key())
			id := v.lane()
			if s.byVoter[id] = slices.DeleteFunc(s.byVoter[id], v.CreatedAt.Equal); len(s.byVoter[id]) == 0 {
				delete(s.byVoter, id)
			}
			n++
		}
		clear(s.order[:n]) // let the collector have the strings
		s.order = s.order[n:]
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

// Format prints the store as "voterewards.MemoryStore" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*memoryStore) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, "voterewards.MemoryStore")
}
