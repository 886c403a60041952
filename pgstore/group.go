package pgstore

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/dblkit/go-topgg/voterewards"
)

// group is the group commit of Ingests without a checkpoint: the caller that
// takes the turn writes every request queued so far in one transaction (one
// commit, one notification); the others wait for theirs. No timer: a batch is
// what arrived while the last one committed, and what its callers queue again
// within two yields of the scheduler.
type group struct {
	mu    sync.Mutex
	queue []*ingestReq
	turn  chan struct{} // one slot: held by the committing caller
}

// ingestReq is one Ingest's votes and, once done is closed, its outcome.
type ingestReq struct {
	votes, added []voterewards.Vote
	grace        time.Duration
	err          error
	done         chan struct{}
}

// maxBatch bounds the requests one transaction of the group commit writes.
const maxBatch = 256

// submit queues r and returns its added votes once its batch committed, or
// ctx's error if ctx ends while r is still queued (r is then not written).
func (s *Store) submit(ctx context.Context, r *ingestReq) ([]voterewards.Vote, error) {
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, r)
	g.mu.Unlock()
	for {
		select {
		case <-r.done: // before the turn below, which may be ready too
			return r.added, r.err
		default:
		}
		select {
		case <-r.done:
			return r.added, r.err
		case <-ctx.Done():
			g.mu.Lock()
			i := slices.Index(g.queue, r)
			if i >= 0 {
				g.queue = slices.Delete(g.queue, i, i+1)
			}
			g.mu.Unlock()
			if i >= 0 {
				return nil, fmt.Errorf("pgstore: ingest: %w", ctx.Err())
			}
			<-r.done // taken by a batch in flight, which is bounded
			return r.added, r.err
		case g.turn <- struct{}{}:
			// The callers whose batch just committed are runnable, a few
			// microseconds from queuing their next votes: two yields let them
			// join this batch rather than form the next one (8 callers:
			// batches of 4.4 votes became about 8, BENCHMARKS.md).
			runtime.Gosched()
			runtime.Gosched()
			g.mu.Lock()
			n := min(len(g.queue), maxBatch)
			batch := slices.Clone(g.queue[:n])
			g.queue = slices.Delete(g.queue, 0, n)
			g.mu.Unlock()
			if len(batch) > 0 { // else committed by the last turn
				// The batch is every caller's: not ended by this caller's ctx.
				s.commit(context.WithoutCancel(ctx), batch)
			}
			<-g.turn
		}
	}
}

// commit writes the batch in one transaction, or each request alone if that
// fails, so that a bad request fails only itself: each within twice the
// transaction limit (a lock wait, then the writes), the batch's and the
// retries' together. Then it closes their done, also after a panic (which
// each request then reports as its error).
func (s *Store) commit(ctx context.Context, batch []*ingestReq) {
	defer func() {
		if rec := recover(); rec != nil {
			for _, r := range batch {
				r.added, r.err = nil, fmt.Errorf("pgstore: ingest: panic in the batch: %v", rec)
			}
		}
		for _, r := range batch {
			close(r.done)
		}
	}()
	bctx, cancel := context.WithTimeout(ctx, 2*s.timeout)
	defer cancel()
	if err := s.write(bctx, batch, nil, 0, false); err != nil {
		rctx, cancel := context.WithTimeout(ctx, 2*s.timeout)
		defer cancel()
		for _, r := range batch {
			if len(batch) > 1 {
				err = s.write(rctx, []*ingestReq{r}, nil, 0, false)
			}
			if err != nil {
				r.err = s.wrap("ingest", err)
			}
		}
	}
}
