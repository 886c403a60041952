package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/voterewards"
)

// Reconnection delays of Follow after its connection fails, and how often
// it checks that no notification was lost.
const (
	followFirstDelay = 100 * time.Millisecond
	followMaxDelay   = 5 * time.Second
	followCheck      = 5 * time.Second
)

// Follow implements [voterewards.Feed] with LISTEN/NOTIFY on one pooled
// connection. It reconnects with backoff after a failure, calling resync once
// listening again, and resyncs when a vote's notification was lost; it never
// gives up before ctx is done, then returns nil. Nil callbacks are an error.
func (s *Store) Follow(ctx context.Context, added func(voterewards.Vote), resync func()) error {
	if added == nil || resync == nil {
		return fmt.Errorf("pgstore: Follow: %w", errNilCallback)
	}
	for attempt := 0; ; attempt++ {
		err := s.listen(ctx, added, resync, func() { attempt = 0 })
		if ctx.Err() != nil {
			return nil
		}
		d := clock.Backoff(attempt, followFirstDelay, followMaxDelay)
		s.log.Warn("pgstore: vote feed lost its connection; reconnecting", "err", s.scrub(err), "retry_in", d)
		if clock.Sleep(ctx, clock.Real(), d) != nil {
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
	w := watch{got: map[int64]bool{}}
	if err := conn.QueryRow(ctx, s.q.lastVoteID).Scan(&w.lo); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return err
	}
	w.settled = w.lo
	listening()
	resync()
	next := time.Now().Add(s.followCheck)
	for {
		wctx, cancel := context.WithDeadline(ctx, next)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil && (ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded)) {
			return err
		}
		if n != nil {
			if err := s.notified(ctx, conn, n, &w, added); err != nil {
				return err
			}
		}
		if !time.Now().Before(next) {
			if err := s.check(ctx, conn, &w, resync); err != nil {
				return err
			}
			next = time.Now().Add(s.followCheck)
		}
	}
}

// watch is what Follow knows of the votes' ids: every vote up to lo, and
// those in got; settled was the newest id one check ago.
type watch struct {
	lo, settled int64
	got         map[int64]bool
}

// notified passes on the votes of one notification.
func (s *Store) notified(ctx context.Context, conn *pgx.Conn, n *pgconn.Notification, w *watch, added func(voterewards.Vote)) error {
	if n.Channel != s.channel || n.Payload == "" {
		return nil
	}
	var keys []string
	if err := json.Unmarshal([]byte(n.Payload), &keys); err != nil {
		return fmt.Errorf("pgstore: a vote notification that is not a JSON array of keys: %w", err)
	}
	voters, created := make([]string, 0, len(keys)), make([]int64, 0, len(keys))
	for _, k := range keys {
		if voter, c, ok := keyParts(k); ok { // else not a vote's: the check resyncs if one is missing
			voters, created = append(voters, voter), append(created, c)
		}
	}
	rows, _ := conn.Query(ctx, s.q.votesByKey, voters, created)
	var id int64
	votes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (voterewards.Vote, error) {
		v, err := scanVote(r, &id)
		if id > w.lo {
			w.got[id] = true
		}
		return v, err
	})
	if err != nil {
		return err
	}
	for _, v := range votes {
		added(v)
	}
	return nil
}

// check resyncs if more votes were committed with ids in (lo, settled] than
// notifications brought: a notification was lost (its process died after the
// commit). Those ids are a check old, so their transactions are over.
func (s *Store) check(ctx context.Context, conn *pgx.Conn, w *watch, resync func()) error {
	var n int
	var newest int64
	if err := conn.QueryRow(ctx, s.q.countVotes, w.lo, w.settled).Scan(&n, &newest); err != nil {
		return err
	}
	for id := range w.got {
		if id <= w.settled {
			n--
			delete(w.got, id)
		}
	}
	if n > 0 {
		s.log.Warn("pgstore: vote feed missed a notification; resyncing")
		resync()
	}
	w.lo, w.settled = w.settled, newest
	return nil
}
