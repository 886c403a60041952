package voterewards

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// MemoryStore is a [Store] in memory: it forgets everything when the process
// ends, so a restart delivers the lookback window again. Use it for tests and
// throwaway runs; keep one value across pollers to simulate a restart. It is
// safe for concurrent use.
type MemoryStore struct {
	mu       sync.Mutex
	cp       Checkpoint
	seen     map[string]Vote
	order    []Vote // seen, as added: by creation time, but for late votes
	pending  map[string]Vote
	expiries map[string]Vote
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{seen: map[string]Vote{}, pending: map[string]Vote{}, expiries: map[string]Vote{}}
}

// Load implements [Store].
func (s *MemoryStore) Load(context.Context) (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := &Snapshot{
		Checkpoint: s.cp,
		Seen:       slices.Collect(maps.Values(s.seen)),
		Pending:    slices.Collect(maps.Values(s.pending)),
		Expiries:   slices.Collect(maps.Values(s.expiries)),
	}
	slices.SortFunc(snap.Seen, byCreated)
	slices.SortFunc(snap.Pending, byCreated)
	slices.SortFunc(snap.Expiries, byExpiry)
	return snap, nil
}

// Ingest implements [Store].
func (s *MemoryStore) Ingest(_ context.Context, cp Checkpoint, votes []Vote) ([]Vote, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var added []Vote
	for _, v := range votes {
		if _, ok := s.seen[v.Key]; ok {
			continue
		}
		s.seen[v.Key] = v
		s.order = append(s.order, v)
		s.pending[v.Key] = v
		added = append(added, v)
	}
	s.cp = cp
	return added, nil
}

// Delivered implements [Store].
func (s *MemoryStore) Delivered(_ context.Context, v Vote, expire bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, v.Key)
	if expire {
		s.expiries[v.Key] = v
	}
	return nil
}

// Expired implements [Store].
func (s *MemoryStore) Expired(_ context.Context, v Vote) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.expiries, v.Key)
	return nil
}

// Prune implements [Store]. It walks the votes in the order they were added
// and stops at the first one that must stay.
func (s *MemoryStore) Prune(_ context.Context, createdBefore, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.order {
		if !v.CreatedAt.Before(createdBefore) || v.ExpiresAt.After(now) {
			break
		}
		delete(s.seen, v.Key)
		n++
	}
	clear(s.order[:n]) // let the collector have the strings
	s.order = s.order[n:]
	return nil
}

func byCreated(a, b Vote) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.Key, b.Key))
}

func byExpiry(a, b Vote) int {
	return cmp.Or(a.ExpiresAt.Compare(b.ExpiresAt), byCreated(a, b))
}
