package voterewards

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// expiries holds the delivered votes whose expiry has not come yet, soonest
// first (votes mostly come in that order, so an insert is mostly an append).
type expiries struct {
	emu   sync.Mutex
	soon  []Vote
	nudge chan struct{}
}

// scheduleExpiry adds v and wakes the expiry loop.
func (r *run) scheduleExpiry(v Vote) {
	r.emu.Lock()
	i, _ := slices.BinarySearchFunc(r.soon, v, func(a, b Vote) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	r.soon = slices.Insert(r.soon, i, v)
	r.emu.Unlock()
	poke(r.nudge)
}

// due pops the votes expired at now and returns when the next expires (zero if none).
func (e *expiries) due(now time.Time) ([]Vote, time.Time) {
	e.emu.Lock()
	defer e.emu.Unlock()
	n := 0
	for n < len(e.soon) && !e.soon[n].ExpiresAt.After(now) {
		n++
	}
	out := slices.Clone(e.soon[:n])
	clear(e.soon[:n]) // let the collector have the strings
	e.soon = e.soon[n:]
	if len(e.soon) == 0 {
		return out, time.Time{}
	}
	return out, e.soon[0].ExpiresAt
}

// expiryLoop queues an expiry job for each vote when its ExpiresAt passes.
func (r *run) expiryLoop(ctx context.Context) {
	clk := r.p.cfg.clock
	for {
		now := clk.Now()
		due, next := r.expiries.due(now)
		for _, v := range due {
			if !r.admit(ctx, job{v: v, expiry: true, at: v.ExpiresAt}, false, false) { // claimed already
				return // still pending in the store: fires at the next run
			}
		}
		var timer <-chan time.Time
		var t clock.Timer
		if !next.IsZero() {
			t = clk.NewTimer(next.Sub(now))
			timer = t.C()
		}
		select {
		case <-ctx.Done():
		case <-r.nudge:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}
