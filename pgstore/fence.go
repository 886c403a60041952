package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/dblkit/go-topgg/voterewards"
)

// UseFence implements [voterewards.State]: nil for one process (unfenced),
// or a fleet's fence, whose token every leader write checks ([ErrFenced]).
// A second call is an error and changes nothing.
func (s *Store) UseFence(f voterewards.Fence) error {
	if !s.fence.CompareAndSwap(nil, &f) {
		return errFenceGiven
	}
	return nil
}

// errFenceGiven: no caller may swap the term the writes are checked by.
var errFenceGiven = errors.New("pgstore: UseFence called twice (the store keeps the first fence)")

// token returns the fence token a leader write must check, and whether it
// must; a token <= 0 (not leading) is refused before any write.
func (s *Store) token() (int64, bool, error) {
	f := s.fence.Load()
	if f == nil || *f == nil {
		return 0, false, nil
	}
	tok := (*f)()
	if tok <= 0 {
		return 0, false, fmt.Errorf("%w (token %d: not leading)", ErrFenced, tok)
	}
	return tok, true, nil
}

// leaderToken is token for a leader action: the first one of a new term
// first raises the fence, in a transaction of its own, so that every write of
// an older term is refused from then on. The raise waits for the older
// term's open transactions (each holds the fence row's share lock).
func (s *Store) leaderToken(ctx context.Context) (int64, bool, error) {
	tok, fenced, err := s.token()
	if err != nil || !fenced || tok <= s.claimed.Load() {
		return tok, fenced, err
	}
	b := &pgx.Batch{}
	b.Queue(s.q.txLimits, s.txLimit(ctx))
	b.Queue(s.q.checkFence, tok)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return 0, false, s.wrap("raise the fence", err)
	}
	for {
		old := s.claimed.Load()
		if old >= tok || s.claimed.CompareAndSwap(old, tok) {
			return tok, true, nil
		}
	}
}

// claimForRead raises the fence for a new term before a read that starts it
// (Load); a refusal is the writes' to report.
func (s *Store) claimForRead(ctx context.Context) error {
	if _, _, err := s.leaderToken(ctx); err != nil && !errors.Is(err, ErrFenced) {
		return err
	}
	return nil
}

// Ping returns nil when the database answers, for readiness. Its error never
// holds the password nor the user name.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return s.wrap("ping", err)
	}
	return nil
}
