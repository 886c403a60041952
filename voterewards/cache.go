package voterewards

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// activeCache maps user ids of both kinds to the latest ExpiresAt seen (Unix ns).
type activeCache struct {
	mu  sync.RWMutex
	ids map[string]int64
}

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

// prune drops the ids whose votes have all expired.
func (c *activeCache) prune(now time.Time) {
	n := now.UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.DeleteFunc(c.ids, func(_ string, exp int64) bool { return exp <= n })
}

// Status is what [Poller.Active] knows about a user's vote.
type Status struct {
	// Active is true while the user's latest vote has not expired.
	Active bool
	// Until is when the active vote expires; zero when Active is false.
	Until time.Time
	// Covered is true once the poller has read the last [VoteLifetime] of the
	// history; until then an inactive answer may be wrong.
	Covered bool
}

// Active reports from memory, without a request or an allocation, whether
// the user with id (a Top.gg user id or platform id) has an active vote: from
// the poll, [Poller.Ingest] at once, and other processes through
// [Poller.Mirror]. A zero Poller knows nothing.
func (p *Poller) Active(id string) Status {
	if p == nil || p.cache == nil {
		return Status{}
	}
	now := p.cfg.clock.Now()
	var st Status
	p.cache.mu.RLock()
	exp := p.cache.ids[id] // the latest expiry known for id
	p.cache.mu.RUnlock()
	if exp > now.UnixNano() {
		st.Active, st.Until = true, time.Unix(0, exp).UTC()
	}
	st.Covered = p.caughtUp.Load() && p.since.Load() <= now.Add(-VoteLifetime).UnixNano()
	return st
}
