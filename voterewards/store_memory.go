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
	byVoter  map[string]voterTimes // CreatedAt of the voter's votes in seen
	order    []Vote                // seen, as added: by creation time, but for late votes
	pending  map[string]Vote
	expiries map[string]Vote
	subs     map[*follower]struct{}
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
		seen: map[string]Vote{}, byVoter: map[string]voterTimes{},
		pending: map[string]Vote{}, expiries: map[string]Vote{}, subs: map[*follower]struct{}{},
		ledger: newMemoryLedger(), remind: map[string]string{},
	}
}

// lock takes the store's lock, unless ctx is done.
func (s *memoryStore) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	return nil
}

// Load implements [Store].
func (s *memoryStore) Load(ctx context.Context) (*Snapshot, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	return &Snapshot{
		Checkpoint: s.cp,
		Seen:       slices.Collect(maps.Values(s.seen)),
		Pending:    slices.Collect(maps.Values(s.pending)),
		Expiries:   slices.Collect(maps.Values(s.expiries)),
	}, nil
}

// Ingest implements [Store].
func (s *memoryStore) Ingest(ctx context.Context, cp *Checkpoint, votes []Vote, grace time.Duration) ([]Vote, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var added []Vote
	for _, v := range votes {
		id := v.lane()
		times := s.byVoter[id]
		if times.near(v.CreatedAt) {
			continue
		}
		s.byVoter[id] = times.add(v.CreatedAt)
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
		f.push(added)
	}
	return added, nil
}

// voterTimes holds the CreatedAt of one voter's votes in the dedup set, the
// first inline (no allocation for the usual one vote).
type voterTimes struct {
	first time.Time
	rest  []time.Time
}

// near reports whether a time less than DedupWindow from t is held.
func (vt voterTimes) near(t time.Time) bool {
	within := func(u time.Time) bool { d := u.Sub(t); return d < DedupWindow && d > -DedupWindow }
	if !vt.first.IsZero() && within(vt.first) {
		return true
	}
	return slices.ContainsFunc(vt.rest, within)
}

func (vt voterTimes) add(t time.Time) voterTimes {
	if vt.first.IsZero() {
		vt.first = t
	} else {
		vt.rest = append(vt.rest, t)
	}
	return vt
}

// remove drops t, and reports whether any time is left.
func (vt voterTimes) remove(t time.Time) (voterTimes, bool) {
	if vt.first.Equal(t) {
		vt.first = time.Time{}
		if len(vt.rest) > 0 {
			vt.first, vt.rest = vt.rest[0], vt.rest[1:]
		}
	} else {
		vt.rest = slices.DeleteFunc(vt.rest, t.Equal)
	}
	return vt, !vt.first.IsZero()
}

// Delivered implements [Store].
func (s *memoryStore) Delivered(ctx context.Context, v Vote, expire bool) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.pending, v.Key())
	if expire {
		s.expiries[v.Key()] = v
	}
	return nil
}

// Expired implements [Store].
func (s *memoryStore) Expired(ctx context.Context, v Vote) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.expiries, v.Key())
	return nil
}

// Prune implements [Store], stopping at the first vote added that must stay.
func (s *memoryStore) Prune(ctx context.Context, createdBefore, now time.Time) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.order {
		if !v.CreatedAt.Before(createdBefore) || v.ExpiresAt.After(now) {
			break
		}
		delete(s.seen, v.Key())
		id := v.lane()
		if times, ok := s.byVoter[id].remove(v.CreatedAt); ok {
			s.byVoter[id] = times
		} else {
			delete(s.byVoter, id)
		}
		n++
	}
	clear(s.order[:n]) // let the collector have the strings
	s.order = s.order[n:]
	return nil
}

// Follow implements [Feed].
func (s *memoryStore) Follow(ctx context.Context, added func(Vote), resync func()) error {
	f := &follower{wake: make(chan struct{}, 1)}
	s.mu.Lock()
	s.subs[f] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, f)
		s.mu.Unlock()
	}()
	resync()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.wake:
		}
		votes, lost := f.take()
		if lost {
			resync()
		}
		for _, v := range votes {
			added(v)
		}
	}
}

// follower buffers the votes added for one Follow call.
type follower struct {
	mu   sync.Mutex
	buf  []Vote
	lost bool
	wake chan struct{}
}

func (f *follower) push(votes []Vote) {
	if len(votes) == 0 {
		return
	}
	f.mu.Lock()
	if len(f.buf)+len(votes) > feedBuffer {
		f.buf, f.lost = nil, true
	} else if !f.lost {
		f.buf = append(f.buf, votes...)
	}
	f.mu.Unlock()
	poke(f.wake)
}

func (f *follower) take() ([]Vote, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	votes, lost := f.buf, f.lost
	f.buf, f.lost = nil, false
	return votes, lost
}

// Format prints the store as "voterewards.MemoryStore" under every verb: fmt would read its
// live state unlocked (a data race) and may reach a secret.
func (*memoryStore) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, "voterewards.MemoryStore")
}
