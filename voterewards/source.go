package voterewards

import (
	"context"

	"github.com/dblkit/go-topgg/topgg"
)

// History is the vote history a [Poller] reads, page by page. *topgg.Client
// satisfies it; tests and adapters may wrap one. A poller calls Votes from
// one goroutine, never concurrently.
type History interface {
	Votes(ctx context.Context, q topgg.VotesQuery) (*topgg.VotePage, error)
}

var _ History = (*topgg.Client)(nil)
