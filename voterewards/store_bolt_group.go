package voterewards

import (
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// ingestGroup is the group commit of the webhook votes: a caller that finds
// no commit running commits every request queued so far in one transaction;
// the requests that arrive meanwhile queue up, and the first of them leads
// the next commit. Unlike DB.Batch, no timer (BENCHMARKS.md).
type ingestGroup struct {
	mu    sync.Mutex
	queue []*ingestReq
	busy  bool
}

type ingestReq struct {
	votes []Vote
	added []Vote
	err   error
	done  chan struct{} // closed when committed (or failed)
	lead  chan struct{} // signalled to lead a commit
}

// submit stores votes and returns the added ones once they are durable.
func (g *ingestGroup) submit(db *bolt.DB, votes []Vote) ([]Vote, error) {
	req := &ingestReq{votes: votes, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, req)
	if g.busy {
		g.mu.Unlock()
		select {
		case <-req.done:
			return req.added, req.err
		case <-req.lead:
		}
		g.mu.Lock()
	}
	g.busy = true
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()

	commit(db, batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].lead <- struct{}{}
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return req.added, req.err
}

// commit stores the batch in one transaction, or each request alone if
// that fails, so that one bad request fails only itself.
func commit(db *bolt.DB, batch []*ingestReq) {
	defer func() {
		for _, r := range batch {
			close(r.done)
		}
	}()
	err := db.Update(func(tx *bolt.Tx) error {
		for _, r := range batch {
			var err error
			if r.added, err = addVotes(tx, r.votes, r.added[:0]); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return
	}
	if len(batch) == 1 {
		batch[0].added, batch[0].err = nil, fmt.Errorf("voterewards: store votes: %w", err)
		return
	}
	for _, r := range batch {
		err := db.Update(func(tx *bolt.Tx) error {
			var err error
			r.added, err = addVotes(tx, r.votes, r.added[:0])
			return err
		})
		if err != nil {
			r.added, r.err = nil, fmt.Errorf("voterewards: store votes: %w", err)
		}
	}
}
