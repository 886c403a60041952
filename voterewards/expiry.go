package voterewards

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// expiries holds the delivered votes whose expiry has not come yet, soonest first.
type expiries struct {
	emu   sync.Mutex
	heap  expiryHeap
	nudge chan struct{}
}

// scheduleExpiry adds v and wakes the expiry loop.
func (r *run) scheduleExpiry(v Vote) {
	r.emu.Lock()
	heap.Push(&r.heap, v)
	r.emu.Unlock()
	poke(r.nudge)
}

// due pops the votes expired at now and returns when the next expires (zero if none).
func (e *expiries) due(now time.Time) ([]Vote, time.Time) {
	e.emu.Lock()
	defer e.emu.Unlock()
	var out []Vote
	for e.heap.Len() > 0 && !e.heap[0].ExpiresAt.After(now) {
		out = append(out, heap.Pop(&e.heap).(Vote))
	}
	if e.heap.Len() == 0 {
		return out, time.Time{}
	}
	return out, e.heap[0].ExpiresAt
}

// expiryLoop queues an expiry job for each vote when its ExpiresAt passes.
func (r *run) expiryLoop(ctx context.Context) {
	clk := r.p.cfg.clock
	for {
		now := clk.Now()
		due, next := r.expiries.due(now)
		for _, v := range due {
			if !r.queue(ctx, job{kind: KindExpiry, v: v, at: v.ExpiresAt}, false, false) { // claimed already
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

type expiryHeap []Vote

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].ExpiresAt.Before(h[j].ExpiresAt) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(Vote)) }
func (h *expiryHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	old[len(old)-1] = Vote{}
	*h = old[:len(old)-1]
	return v
}
