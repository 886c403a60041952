package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dblkit/go-topgg/internal/clock"
)

// renewal is the outcome of one renewal request sent at sent.
type renewal struct {
	sent time.Time
	ok   bool
	err  error
}

// keep renews the lease while ctx lives, moving the term's deadline on each
// success, and ends the term when the lease was taken or its deadline passed.
// Renewals run one at a time on their own goroutine, so that a hung request
// cannot delay the deadline; keep waits for it before returning.
func (l *Lease) keep(ctx context.Context, t *clock.Term, value string, sent time.Time) {
	deadline := sent.Add(l.ttl - l.margin)
	lost := l.clock.NewTimer(deadline.Sub(l.clock.Now()))
	defer func() { lost.Stop() }()
	tick := l.clock.NewTimer(l.renewEvery)
	defer func() { tick.Stop() }()

	results := make(chan renewal, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel() // runs before wg.Wait: ends a request in flight
	inflight := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-lost.C():
			t.End(fmt.Errorf("%w: not renewed within TTL-margin (%v)", ErrLeaseLost, l.ttl-l.margin))
			return
		case <-tick.C():
			tick = l.clock.NewTimer(l.renewEvery)
			if inflight {
				continue
			}
			inflight = true
			now := l.clock.Now()
			budget := deadline.Sub(now)
			wg.Go(func() {
				ok, err := l.renew(rctx, value, budget)
				results <- renewal{sent: now, ok: ok, err: err}
			})
		case r := <-results:
			inflight = false
			switch {
			case r.err != nil:
				l.log.Warn("lease renewal failed", "err", r.err, "stop_in", deadline.Sub(l.clock.Now()))
			case !r.ok:
				t.End(fmt.Errorf("%w: the lease is held by another process", ErrLeaseLost))
				return
			default:
				deadline = r.sent.Add(l.ttl - l.margin)
				t.Extend(deadline)
				lost.Stop()
				lost = l.clock.NewTimer(deadline.Sub(l.clock.Now()))
			}
		}
	}
}

// renew extends our lease by TTL if it still holds value, within budget. A
// renewal the replicas did not all acknowledge is an error: a failover could
// lose it.
func (l *Lease) renew(ctx context.Context, value string, budget time.Duration) (bool, error) {
	if budget <= 0 {
		return false, fmt.Errorf("%w: no time left to renew", ErrLeaseLost)
	}
	rctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	v, err := l.runAcked(rctx, renewScript, []string{l.leaseKey}, []any{value, l.ttl.Milliseconds()},
		func(v any) bool { return v == int64(1) })
	if err != nil {
		return false, err
	}
	return v == int64(1), nil
}
