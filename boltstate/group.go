package boltstate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ingestGroup is the group commit of every write: the caller that takes the
// turn commits every request queued so far in one transaction. A vote takes
// the turn at once; a delivery, expiry or reminder record waits up to
// batchDelay to ride in the commit of the next vote (one fsync per webhook).
type ingestGroup struct {
	mu    sync.Mutex
	queue []*ingestReq
	turn  chan struct{} // one slot: held by the committing caller
	delay time.Duration // batchDelay
}

// ingestReq is a change to commit in the group.
type ingestReq struct {
	write    func(*bolt.Tx) error // run once per attempt: may run again alone
	err      error
	panicked any           // what write panicked with, rethrown to its caller
	done     chan struct{} // closed when committed (or failed)
}

// submit commits req (if ride, after up to g.delay for a commit to ride in)
// and returns once it is durable, or failed; or ctx's error if ctx ends while
// req is still queued (req is then not written). A panic of req.write is
// rethrown here, in its caller's goroutine, as bbolt's DB.Batch does.
func (g *ingestGroup) submit(ctx context.Context, db *bolt.DB, req *ingestReq, ride bool) error {
	req.done = make(chan struct{})
	g.mu.Lock()
	g.queue = append(g.queue, req)
	g.mu.Unlock()
	if ride {
		t := time.NewTimer(g.delay)
		defer t.Stop()
		select {
		case <-req.done:
			return req.result()
		case <-ctx.Done():
		case <-t.C:
		}
	}
	select {
	case <-req.done: // committed by the caller whose turn it was
	case <-ctx.Done():
		if g.leave(req) {
			return ctx.Err()
		}
	case g.turn <- struct{}{}:
		g.mu.Lock()
		batch := g.queue
		g.queue = nil
		g.mu.Unlock()
		if len(batch) > 0 { // else committed by the last turn
			commit(db, batch)
		}
		<-g.turn
	}
	return req.result() // in this batch, or one in flight (bounded: a commit)
}

// result waits for r's commit and returns its error, or rethrows its write's panic.
func (r *ingestReq) result() error {
	<-r.done
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r.err
}

// leave takes req out of the queue, and reports whether it was still there.
func (g *ingestGroup) leave(req *ingestReq) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.queue, req)
	if i >= 0 {
		g.queue = slices.Delete(g.queue, i, i+1)
	}
	return i >= 0
}

// apply writes r in tx; a panic fails the transaction and is kept for r's caller.
func (r *ingestReq) apply(tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked, err = p, errPanicked
		}
	}()
	return r.write(tx)
}

var errPanicked = errors.New("a change panicked")

// commit stores the batch in one transaction, or each request alone if that
// fails, so that a bad request fails only itself; then it closes their done,
// also after a panic outside the changes (in bbolt), each's error then: the
// batch may be durable all the same (a vote sent again is then a duplicate).
func commit(db *bolt.DB, batch []*ingestReq) {
	defer func() {
		if p := recover(); p != nil {
			for _, r := range batch {
				r.err = fmt.Errorf("panic in the commit: %v", p)
			}
		}
		for _, r := range batch {
			close(r.done)
		}
	}()
	err := db.Update(func(tx *bolt.Tx) error {
		for _, r := range batch {
			if err := r.apply(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return
	}
	if len(batch) == 1 {
		batch[0].err = err
		return
	}
	for _, r := range batch {
		r.err = db.Update(r.apply)
	}
}
