package voterewards

import (
	"context"
	"time"
)

// Stats returns the ledger of voter user (a Discord id, else a Top.gg user id):
// every vote the store admitted, delivered or not; zero with UserID set for a
// voter never seen. Any process may call it.
func (p *Poller) Stats(ctx context.Context, user string) (Stats, error) {
	return p.store.Stats(ctx, user)
}

// Leaderboard returns the top n voters (1..[MaxLeaderboard], else
// [ErrBadLeaderboard]) of month's UTC month, or of all time if month is zero,
// in [CompareStandings] order. Any process may call it.
func (p *Poller) Leaderboard(ctx context.Context, month time.Time, n int) ([]Standing, error) {
	if err := checkLeaderboard(n); err != nil {
		return nil, err
	}
	return p.store.Leaderboard(ctx, month, n)
}
