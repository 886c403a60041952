package voterewards

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// expiries holds the delivered votes whose expiry has not come yet, soonest
// first; the store holds them too, so they survive a restart.
type expiries struct {
	emu   sync.Mutex
	heap  expiryHeap
	nudge chan struct{}
}

func (e *expiries) init() { e.nudge = make(chan struct{}, 1) }

func (e *expiries) push(v Vote) {
	e.emu.Lock()
	heap.Push(&e.heap, v)
	e.emu.Unlock()
}

// scheduleExpiry adds v and wakes the expiry loop, whose timer may be set for
// a later vote.
func (p *Poller) scheduleExpiry(v Vote) {
	p.expiries.push(v)
	select {
	case p.nudge <- struct{}{}:
	default:
	}
}

// due pops the votes expired at now and returns when the next one expires
// (zero if none is left).
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
func (p *Poller) expiryLoop(ctx context.Context) {
	t := time.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	for {
		now := p.cfg.Now()
		due, next := p.expiries.due(now)
		for _, v := range due {
			if !p.enqueue(ctx, job{kind: KindExpiry, v: v, at: v.ExpiresAt}) {
				return // still pending in the store: fires at the next start
			}
		}
		var timer <-chan time.Time
		if !next.IsZero() {
			t.Reset(next.Sub(now))
			timer = t.C
		}
		select {
		case <-ctx.Done():
			return
		case <-p.nudge:
			t.Stop()
		case <-timer:
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
