package voterewards

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
)

// TestLedgerStatsOfNoUser: no voter has the id "": asking for its ledger is
// a caller's field left empty, an error from every store and the Poller, not
// a zero Stats that looks like a voter who never voted.
func TestLedgerStatsOfNoUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bolt, err := OpenStore(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = bolt.Close() })
	for name, s := range map[string]Store{"memory": NewMemoryStore(), "bolt": bolt} {
		st, err := s.Stats(ctx, "")
		require.ErrorIs(t, err, topgg.ErrNilArgument, name)
		assert.Zero(t, st, name)
		p, err := New(historyStub{}, Config{Store: s, OnReward: func(context.Context, Vote) error { return nil }})
		require.NoError(t, err)
		_, err = p.Stats(ctx, "")
		assert.ErrorIs(t, err, topgg.ErrNilArgument, "%s, through the Poller", name)
	}
}

// historyStub is a History never called: the tests only read the ledger.
type historyStub struct{}

func (historyStub) Votes(context.Context, topgg.VotesQuery) (*topgg.VotePage, error) {
	return &topgg.VotePage{}, nil
}
