package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/internal/backoff"
	"github.com/dblkit/go-topgg/voterewards"
)

// Reconnection delays of Follow after its connection fails.
const (
	followFirstDelay = 100 * time.Millisecond
	followMaxDelay   = 5 * time.Second
)

// Follow implements [voterewards.Feed] with LISTEN/NOTIFY on one pooled
// connection. It reconnects with backoff after a failure, calling resync once
// listening again, and never gives up before ctx is done; then it returns
// nil. Nil callbacks are an error.
func (s *Store) Follow(ctx context.Context, added func(voterewards.Vote), resync func()) error {
	if added == nil || resync == nil {
		return fmt.Errorf("pgstore: Follow: %w", errNilCallback)
	}
	for attempt := 0; ; attempt++ {
		err := s.listen(ctx, added, resync, func() { attempt = 0 })
		if ctx.Err() != nil {
			return nil
		}
		d := backoff.Exp(attempt, followFirstDelay, followMaxDelay)
		s.log.Warn("pgstore: vote feed lost its connection; reconnecting", "err", s.scrub(err), "retry_in", d)
		if backoff.Sleep(ctx, d) != nil {
			return nil
		}
	}
}

var errNilCallback = errors.New("nil added or resync")

// listen runs one connection of the feed until it fails or ctx ends, calling
// listening once LISTEN succeeded.
func (s *Store) listen(ctx context.Context, added func(voterewards.Vote), resync, listening func()) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection leaves the pool: it listens, and is closed when done.
	conn := pc.Hijack()
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return err
	}
	listening()
	resync()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Channel != s.channel || n.Payload == "" {
			continue
		}
		var keys []string
		if err := json.Unmarshal([]byte(n.Payload), &keys); err != nil {
			return fmt.Errorf("pgstore: a vote notification that is not a JSON array of keys: %w", err)
		}
		votes, err := s.votesByKey(ctx, conn, keys)
		if err != nil {
			return err
		}
		for _, v := range votes {
			added(v)
		}
	}
}

// votesByKey reads the newest vote of each key, in the order they were added.
func (s *Store) votesByKey(ctx context.Context, conn *pgx.Conn, keys []string) ([]voterewards.Vote, error) {
	rows, _ := conn.Query(ctx, s.q.votesByKey, keys)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (voterewards.Vote, error) { return scanVote(r) })
}
