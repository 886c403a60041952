package voterewards

import (
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// ingestGroup is the group commit of the webhook votes: a caller that finds
// no commit running commits every request queued so far in one transaction
// (one fsync); requests that arrive meanwhile queue up, and when the commit
// ends the first of them leads the next. Under load a commit carries every
// request that came during the one before, with no timer to wait for; alone,
// a request commits at once. (bbolt's DB.Batch waits for a timer or a full
// batch, and its size is tuned for the delivery records.)
type ingestGroup struct {
	mu    sync.Mutex
	queue []*ingestReq
	busy  bool
}

type ingestReq struct {
	votes []Vote
	added []Vote
	err   error
	done  chan struct{} // closed when the request is committed (or failed)
	lead  chan struct{} // signalled when the request is to lead a commit
}

// submit stores votes, sharing the commit with concurrent calls, and returns
// the added ones once they are durable.
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

// commit stores the batch in one transaction. If it fails, each request is
// tried alone, so that one bad request fails only itself.
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
		batch[0].added, batch[0].err = nil, fmt.Errorf("writing %s: %w", db.Path(), err)
		return
	}
	for _, r := range batch {
		err := db.Update(func(tx *bolt.Tx) error {
			var err error
			r.added, err = addVotes(tx, r.votes, r.added[:0])
			return err
		})
		if err != nil {
			r.added, r.err = nil, fmt.Errorf("writing %s: %w", db.Path(), err)
		}
	}
}
