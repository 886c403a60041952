package pgstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterewards/storetest"
)

// TestStoreSuite runs the shared store suite (every promise of
// voterewards.Store and Feed) on PostgreSQL.
func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) voterewards.State { return open(t, pgstore.Config{}) })
}

// TestKeepsEveryVote: Prune takes votes out of the dedup set only; the
// votes stay in the table (PostgreSQL keeps every vote), and the ledger.
func TestKeepsEveryVote(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	s, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	old := vote(1, base)
	ingest(t, s, nil, old)
	later := base.Add(3 * voterewards.VoteLifetime)
	require.NoError(t, s.Prune(ctx, later, later))
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Seen)
	var kept int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM topgg.votes").Scan(&kept))
	assert.Equal(t, 1, kept, "the pruned vote is kept")
	st, err := s.Stats(ctx, old.PlatformID)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes)
}

// TestStorePrintsByName: fmt of a Store walked its pool's live state; under
// every verb it prints its name alone.
func TestStorePrintsByName(t *testing.T) {
	s := open(t, pgstore.Config{})
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		assert.Equal(t, "pgstore.Store", fmt.Sprintf(verb, s), verb)
	}
}
