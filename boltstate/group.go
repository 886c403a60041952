package boltstate

import (
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dblkit/go-topgg/voterewards"
)

// ingestGroup is the group commit of the webhook votes: the caller that takes
// the turn commits every request queued so far in one transaction, with no
// timer, unlike DB.Batch (BENCHMARKS.md).
type ingestGroup struct {
	mu    sync.Mutex
	queue []*ingestReq
	turn  chan struct{} // one slot: held by the committing caller
}

type ingestReq struct {
	votes, added []voterewards.Vote
	grace        time.Duration
	err          error
	done         chan struct{} // closed when committed (or failed)
}

// submit stores votes and returns the added ones once they are durable.
func (g *ingestGroup) submit(db *bolt.DB, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	req := &ingestReq{votes: votes, grace: grace, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, req)
	g.mu.Unlock()
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
	return req.added, req.err
}

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
			var err error
			if r.added, err = addVotes(tx, r.votes, r.added[:0], r.grace); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return
	}
	if len(batch) == 1 {
		batch[0].added, batch[0].err = nil, fmt.Errorf("store votes in %s: %w", db.Path(), err)
		return
	}
	for _, r := range batch {
		err := db.Update(func(tx *bolt.Tx) error {
			var err error
			r.added, err = addVotes(tx, r.votes, r.added[:0], r.grace)
			return err
		})
		if err != nil {
			r.added, r.err = nil, fmt.Errorf("store votes in %s: %w", db.Path(), err)
		}
	}
}
