package boltstate

import (
	"errors"
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
// and returns once it is durable, or failed: req.err.
func (g *ingestGroup) submit(db *bolt.DB, req *ingestReq, ride bool) {
	req.done = make(chan struct{})
	g.mu.Lock()
	g.queue = append(g.queue, req)
	g.mu.Unlock()
	if ride {
		t := time.NewTimer(g.delay)
		defer t.Stop()
		select {
		case <-req.done:
			return
		case <-t.C:
		}
	}
	select {
	case <-req.done: // committed by the caller whose turn it was
	case g.turn <- struct{}{}:
		// Queued before the turn was taken: in this batch, or the one before.
		g.mu.Lock()
		batch := g.queue
		g.queue = nil
		g.mu.Unlock()
		if len(batch) > 0 {
			commit(db, batch)
		}
		<-g.turn
	}
	<-req.done
	if req.panicked != nil {
		panic(req.panicked)
	}
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
// fails, so that a bad request fails only itself.
func commit(db *bolt.DB, batch []*ingestReq) {
	defer func() {
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
