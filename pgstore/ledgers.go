package pgstore

import (
	"sync"

	"github.com/dblkit/go-topgg/voterewards"
)

// ledgerCacheSize bounds [ledgers]: the voters of a busy day, a few MB.
const ledgerCacheSize = 1 << 14

// ledgers holds the ledger each voter had after this process's last write of
// it, so that the next write of the voter needs no read first: the write
// checks that the ledger is still the stored one (see [Store.write]).
type ledgers struct {
	mu      sync.Mutex
	m       map[string]voterewards.Stats
	evicted bool // a voter not cached may be one dropped, not a new one
	// refusals weighs the recent writes from the cache: 16 a refusal, -1 a
	// write it served or a batch it sat out. From 8 it sits out: where other
	// processes write the same voters (a fleet), most batches would be sent
	// twice; it tries again 9 batches after a refusal.
	refusals int
}

// get returns the cached ledgers of voters, a voter not cached given a new
// voter's (which the write's check refuses if the voter has one stored);
// false once the cache has dropped one, as a miss is then likely not new, or
// while its writes were mostly refused.
func (l *ledgers) get(voters []string) (map[string]voterewards.Stats, bool) {
	out := make(map[string]voterewards.Stats, len(voters))
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refusals >= 8 {
		l.refusals--
		return nil, false
	}
	for _, v := range voters {
		st, ok := l.m[v]
		if !ok && l.evicted {
			return nil, false
		}
		out[v] = st
	}
	return out, true
}

// put caches the ledgers of a committed write, keeping a newer one cached by
// a write that committed after it; to add one when full, one is dropped.
func (l *ledgers) put(added []voterewards.Vote) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = make(map[string]voterewards.Stats)
	}
	for _, v := range added {
		st := v.Stats
		cur, ok := l.m[st.UserID]
		if ok && cur.Votes >= st.Votes {
			continue
		}
		for k := range l.m {
			if ok || len(l.m) < ledgerCacheSize {
				break
			}
			delete(l.m, k)
			l.evicted = true
		}
		// As a read gives it back: UTC, no monotonic reading.
		st.StreakUntil, st.Month, st.LastVote = fromNS(ns(st.StreakUntil)), fromNS(ns(st.Month)), fromNS(ns(st.LastVote))
		l.m[st.UserID] = st
	}
}

// forget drops the ledgers of voters: a write of them failed or was refused.
func (l *ledgers) forget(voters []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range voters {
		delete(l.m, v)
	}
}

// served records whether the database took a write made from the cache.
func (l *ledgers) served(ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ok {
		l.refusals = max(l.refusals-1, 0)
	} else {
		l.refusals = min(l.refusals+16, 64)
	}
}
