package voterewards

import (
	"slices"
	"sync"
	"time"
)

// activeCache maps user ids, of both kinds, to the latest ExpiresAt seen, as
// Unix nanoseconds: one map and small values keep a lookup to one probe and
// free of allocation. A string that is a user id of one voter and a platform
// id of another answers for both, as asking by either kind of id would.
type activeCache struct {
	mu  sync.RWMutex
	ids map[string]int64
}

func newActiveCache() *activeCache { return &activeCache{ids: map[string]int64{}} }

func (c *activeCache) add(votes []Vote) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range votes {
		exp := v.ExpiresAt.UnixNano()
		for _, id := range [2]string{v.UserID, v.PlatformID} {
			if id != "" && exp > c.ids[id] {
				c.ids[id] = exp
			}
		}
	}
}

// addActive adds the votes not expired at now.
func (c *activeCache) addActive(votes []Vote, now time.Time) {
	c.add(slices.DeleteFunc(slices.Clone(votes), func(v Vote) bool { return !v.ExpiresAt.After(now) }))
}

// until returns the latest expiry known for id.
func (c *activeCache) until(id string) int64 {
	c.mu.RLock()
	exp := c.ids[id]
	c.mu.RUnlock()
	return exp
}

// prune drops the ids whose votes have all expired, so the cache holds the
// vote window, not the history.
func (c *activeCache) prune(now time.Time) {
	n := now.UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, exp := range c.ids {
		if exp <= n {
			delete(c.ids, id)
		}
	}
}

// Status is what [Poller.Active] knows about a user's vote.
type Status struct {
	// Active is true while the user's latest vote has not expired.
	Active bool
	// Until is when the active vote expires (the user may vote again then);
	// zero when Active is false.
	Until time.Time
	// Covered is true once the poller has read the whole vote window (the last
	// [VoteLifetime]) up to the end of the history, in the current or last Run
	// of this Poller. Until then an
	// inactive answer may be wrong: the vote may not have been read yet.
	Covered bool
}

// Active reports from memory, without a request, whether the user with the
// given id (Top.gg user id or platform id, e.g. Discord user id) has an
// active vote, and whether the answer covers the whole vote window. It is safe
// for concurrent use, does not allocate, and may be called at any time (a
// zero Poller knows nothing). It learns votes from the poll, from
// [Poller.Ingest] at once, and, in a process that runs [Poller.Mirror] on a
// shared store, from the other processes.
func (p *Poller) Active(id string) Status {
	if p == nil || p.cache == nil {
		return Status{}
	}
	now := p.cfg.clock.Now()
	var st Status
	if exp := p.cache.until(id); exp > now.UnixNano() {
		st.Active, st.Until = true, time.Unix(0, exp).UTC()
	}
	st.Covered = p.caughtUp.Load() && p.since.Load() <= now.Add(-VoteLifetime).UnixNano()
	return st
}
