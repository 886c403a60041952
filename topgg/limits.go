package topgg

import (
	"context"
	"sync"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// limits is what the client knows of the service's limits: blocks learnt from
// Retry-After answers, per route family, and the v0 sliding window.
type limits struct {
	clk clock.Clock

	mu      sync.Mutex
	blocked map[string]time.Time // family -> end of block

	legacyPer time.Duration
	legacyLog []time.Time // ring of the last n v0 send times
	legacyPos int
}

func newLimits(clk clock.Clock, n int, per time.Duration) *limits {
	l := &limits{clk: clk, blocked: make(map[string]time.Time), legacyPer: per}
	if n > 0 && per > 0 {
		l.legacyLog = make([]time.Time, n)
	}
	return l
}

// checkLocked returns the rest of family's block, forgetting an ended one; l.mu held.
func (l *limits) checkLocked(family string, now time.Time) time.Duration {
	left := l.blocked[family].Sub(now) // none: the zero time, long past
	if left <= 0 {
		delete(l.blocked, family)
	}
	return max(left, 0)
}

// block records that family may not be called before now+d.
func (l *limits) block(family string, d time.Duration) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	until := l.clk.Now().Add(d)
	if until.After(l.blocked[family]) {
		l.blocked[family] = until
	}
	return l.blocked[family]
}

// legacySlot is a place in the v0 window; i < 0 when none was taken.
type legacySlot struct {
	i  int
	at time.Time
}

var noSlot = legacySlot{i: -1}

// acquire clears one send of r: it waits out a block of r's family within
// maxWait, else fails with a local *RateLimitError; a v0 call then takes a
// slot of the sliding window (never more than n in any window), waiting
// if need be. The caller ends its request with doneLegacy.
func (l *limits) acquire(ctx context.Context, r *call, maxWait time.Duration) (legacySlot, error) {
	budget := maxWait
	for {
		if err := ctx.Err(); err != nil {
			return noSlot, err
		}
		l.mu.Lock()
		now := l.clk.Now()
		wait := l.checkLocked(r.family, now)
		switch {
		case wait > budget:
			l.mu.Unlock()
			return noSlot, &RateLimitError{Op: r.op(), RetryAfter: wait, Local: true}
		case wait > 0:
			budget -= wait
		case !r.legacy || l.legacyLog == nil:
			l.mu.Unlock()
			return noSlot, nil
		default:
			// The oldest of the last n sends; a zero time is long past.
			if wait = l.legacyLog[l.legacyPos].Add(l.legacyPer).Sub(now); wait <= 0 {
				slot := legacySlot{i: l.legacyPos, at: now}
				l.legacyLog[l.legacyPos] = now
				l.legacyPos = (l.legacyPos + 1) % len(l.legacyLog)
				l.mu.Unlock()
				return slot, nil
			}
		}
		l.mu.Unlock()
		if err := clock.Sleep(ctx, l.clk, wait); err != nil {
			return noSlot, err
		}
	}
}

// doneLegacy moves a slot's time to the end of its request: the service
// counts it somewhere in between, and going over costs a one-hour block.
func (l *limits) doneLegacy(s legacySlot) {
	if s.i < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.legacyLog[s.i].Equal(s.at) { // not yet taken over by a later request
		l.legacyLog[s.i] = l.clk.Now()
	}
}
