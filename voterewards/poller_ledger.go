package voterewards

import (
	"context"
	"time"
)

// Stats returns the ledger of voter user (a Discord id, else a Top.gg user
// id) from the store, in one read; a voter never seen gets a zero Stats with
// User set. It counts every vote the store admitted (delivered or not), as
// the package documentation's "The ledger" says; use [Stats.CurrentStreak]
// and [Stats.ThisMonth] with the current time to show a streak or a month.
// Any process of a fleet may call it, with or without Run; it is safe for
// concurrent use.
func (p *Poller) Stats(ctx context.Context, user string) (Stats, error) {
	if p == nil || p.store == nil {
		return Stats{}, errNotMade
	}
	return p.store.Stats(ctx, user)
}

// Leaderboard returns the top n voters (1..[MaxLeaderboard], else
// [ErrBadLeaderboard]) of the UTC month that holds month (any instant of it,
// in any location), or of all time if month is zero, in [CompareStandings]
// order (Total, then who reached it first, then user id), from the store.
// Fewer are returned if fewer voted. Like Stats, any process may call it.
func (p *Poller) Leaderboard(ctx context.Context, month time.Time, n int) ([]Standing, error) {
	if p == nil || p.store == nil {
		return nil, errNotMade
	}
	if err := checkLeaderboard(n); err != nil {
		return nil, err
	}
	return p.store.Leaderboard(ctx, month, n)
}
