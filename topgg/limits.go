package topgg

import (
	"context"
	"sync"
	"time"

	"github.com/dblkit/go-topgg/internal/backoff"
)

// AnnouncementCooldown is the service's limit of one announcement per 4 hours.
const AnnouncementCooldown = 4 * time.Hour

// limits is what the client knows locally about the service's limits: blocks learnt
// from 429s, per route family, and the v0 sliding window. It is per Client.
type limits struct {
	now func() time.Time

	mu      sync.Mutex
	blocked map[string]time.Time // family -> end of block

	legacyN   int
	legacyPer time.Duration
	legacyLog []time.Time // ring of the last legacyN v0 send times
	legacyPos int
}

func newLimits(now func() time.Time, n int, per time.Duration) *limits {
	l := &limits{now: now, blocked: make(map[string]time.Time), legacyN: n, legacyPer: per}
	if n > 0 && per > 0 {
		l.legacyLog = make([]time.Time, n)
	}
	return l
}

// check returns the remaining block of family, or 0.
func (l *limits) check(family string) (time.Duration, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	until, ok := l.blocked[family]
	if !ok {
		return 0, time.Time{}
	}
	if left := until.Sub(l.now()); left > 0 {
		return left, until
	}
	delete(l.blocked, family)
	return 0, time.Time{}
}

// block records that family may not be called before now+d.
func (l *limits) block(family string, d time.Duration) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	until := l.now().Add(d)
	if until.After(l.blocked[family]) {
		l.blocked[family] = until
	}
	return l.blocked[family]
}

// legacySlot is a place in the v0 window taken by waitLegacy; i < 0 when the
// limiter is off.
type legacySlot struct {
	i  int
	at time.Time
}

// waitLegacy takes a v0 slot, waiting (with ctx) until fewer than legacyN v0 requests
// were sent in the last legacyPer. A sliding window, unlike a token bucket, never lets
// more than legacyN through in any window, which is what the service counts.
// The caller reports the end of its request with doneLegacy.
func (l *limits) waitLegacy(ctx context.Context) (legacySlot, error) {
	if l.legacyLog == nil {
		return legacySlot{i: -1}, ctx.Err()
	}
	for {
		l.mu.Lock()
		now := l.now()
		oldest := l.legacyLog[l.legacyPos]
		wait := oldest.Add(l.legacyPer).Sub(now)
		if oldest.IsZero() || wait <= 0 {
			slot := legacySlot{i: l.legacyPos, at: now}
			l.legacyLog[l.legacyPos] = now
			l.legacyPos = (l.legacyPos + 1) % len(l.legacyLog)
			l.mu.Unlock()
			if err := ctx.Err(); err != nil {
				return legacySlot{i: -1}, err
			}
			return slot, nil
		}
		l.mu.Unlock()
		if err := backoff.Sleep(ctx, wait); err != nil {
			return legacySlot{i: -1}, err
		}
	}
}

// doneLegacy moves a slot's time to the end of its request. The service counts a
// request when it arrives, somewhere between our send and its answer; counting
// from the answer keeps the next request a full window after the service's count,
// whatever the latency. (Going over the limit costs a one-hour block.)
func (l *limits) doneLegacy(s legacySlot) {
	if s.i < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.legacyLog[s.i].Equal(s.at) { // not yet taken over by a later request
		l.legacyLog[s.i] = l.now()
	}
}
