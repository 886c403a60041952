package voterewards

import (
	"context"
	"time"
)

// Stats returns the ledger of voter user (a Discord id, else a Top.gg user
// id): every vote the store admitted, delivered or not. A voter never seen
// gets a zero Stats with User set. Any process of a fleet may call it, with
// or without Run.
func (p *Poller) Stats(ctx context.Context, user string) (Stats, error) {
	if p == nil || p.store == nil {
		return Stats{}, errNotMade
	}
	return p.store.Stats(ctx, user)
}

// Leaderboard returns the top n voters (1..[MaxLeaderboard], else
// [ErrBadLeaderboard]) of the UTC month that holds month, or of all time if
// month is zero, in [CompareStandings] order; fewer if fewer voted. Any
// process may call it.
func (p *Poller) Leaderboard(ctx context.Context, month time.Time, n int) ([]Standing, error) {
	if p == nil || p.store == nil {
		return nil, errNotMade
	}
	if err := checkLeaderboard(n); err != nil {
		return nil, err
	}
	return p.store.Leaderboard(ctx, month, n)
}
