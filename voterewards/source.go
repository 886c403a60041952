package voterewards

import (
	"context"

	"github.com/dblkit/go-topgg/topgg"
)

// Source reads pages of the vote history. *topgg.Client satisfies it; tests and
// adapters may wrap one. A poller calls Votes from one goroutine, never
// concurrently.
type Source interface {
	Votes(ctx context.Context, q topgg.VotesQuery) (*topgg.VotePage, error)
}

var _ Source = (*topgg.Client)(nil)
