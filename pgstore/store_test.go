package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
	s, pool := openPooled(t)
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

// TestRetentionDeletesOnlyHandledVotesOutOfTheDedupSet: with a Retention,
// Prune deletes the votes that left the dedup set and are older than it,
// once their reward and expiry are handled; a vote still pending, one in
// the dedup set, and every voter's ledger stay. A negative Retention is refused.
func TestRetentionDeletesOnlyHandledVotesOutOfTheDedupSet(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	_, err := pgstore.Open(ctx, pool, pgstore.Config{Retention: -time.Hour})
	require.ErrorIs(t, err, pgstore.ErrBadConfig)
	s, err := pgstore.Open(ctx, pool, pgstore.Config{Retention: 24 * time.Hour})
	require.NoError(t, err)
	done, pending, expiring := vote(1, base), vote(2, base), vote(3, base)
	ingest(t, s, nil, done, pending, expiring)
	require.NoError(t, s.Delivered(ctx, done, false))
	require.NoError(t, s.Delivered(ctx, expiring, true)) // its expiry not handled yet
	later := base.Add(3 * voterewards.VoteLifetime)
	recent := vote(4, later)
	ingest(t, s, nil, recent)

	require.NoError(t, s.Prune(ctx, later, later)) // out of the dedup set; not yet older than Retention
	keys := func() []string {
		rows, err := pool.Query(ctx, "SELECT key FROM topgg.votes ORDER BY id")
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	require.Len(t, keys(), 4, "deleted before its Retention")
	require.NoError(t, s.Prune(ctx, later, later.Add(24*time.Hour)))
	assert.Equal(t, []string{pending.Key(), expiring.Key(), recent.Key()}, keys(), "only the handled vote past its Retention goes")
	for _, v := range []voterewards.Vote{done, pending, expiring, recent} {
		st, err := s.Stats(ctx, v.PlatformID)
		require.NoError(t, err)
		assert.Equal(t, 1, st.Votes, "the ledger lost a deleted vote")
	}
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	require.Len(t, snap.Pending, 2)
	assert.ElementsMatch(t, []string{pending.Key(), recent.Key()}, []string{snap.Pending[0].Key(), snap.Pending[1].Key()})
	require.Len(t, snap.Expiries, 1)
	assert.Equal(t, expiring.Key(), snap.Expiries[0].Key())
	assert.Len(t, snap.Seen, 1, "the recent vote stays in the dedup set")
}
