package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestOpenConcurrently: processes opening one new database at once create
// the schema once, and every one of them gets a working store.
func TestOpenConcurrently(t *testing.T) {
	ctx := context.Background()
	dbURL := pg.URL(t)
	const n = 6
	stores := make([]*pgstore.Store, n)
	var wg sync.WaitGroup
	for i := range n {
		pool := openPool(t, dbURL) // one pool per process
		wg.Go(func() {
			s, err := pgstore.Open(ctx, pool, pgstore.Config{})
			assert.NoError(t, err)
			stores[i] = s
		})
	}
	wg.Wait()
	for _, s := range stores {
		require.NotNil(t, s)
	}
	ingest(t, stores[0], nil, vote(1, base))
	assert.Empty(t, ingest(t, stores[n-1], nil, vote(1, base)), "one database, one dedup set")
	var versions int
	require.NoError(t, openPool(t, dbURL).QueryRow(ctx, "SELECT count(*) FROM topgg.schema_version").Scan(&versions))
	assert.Equal(t, pgstore.SchemaVersion, versions, "each migration applied once")
}

// TestOpenRefusesNewerSchema: a schema made by a newer version of the code
// is an error naming both versions, not a guess.
func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	_, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "INSERT INTO topgg.schema_version (version) VALUES ($1)", pgstore.SchemaVersion+1)
	require.NoError(t, err)
	_, err = pgstore.Open(ctx, pool, pgstore.Config{})
	require.ErrorIs(t, err, pgstore.ErrSchemaTooNew)
	assert.Contains(t, err.Error(), fmt.Sprintf("version %d", pgstore.SchemaVersion+1))
	_, err = pgstore.Open(ctx, pool, pgstore.Config{Schema: "other"})
	assert.NoError(t, err, "another schema is another store")
}

// TestOpenMisuse: a nil pool and a schema name that is no plain identifier
// are errors.
func TestOpenMisuse(t *testing.T) {
	ctx := context.Background()
	_, err := pgstore.Open(ctx, nil, pgstore.Config{})
	assert.ErrorIs(t, err, topgg.ErrNilArgument)
	pool := pg.Pool(t)
	for _, bad := range []string{"Topgg", "a-b", `x"; DROP TABLE y; --`, "1abc", strings.Repeat("a", 51)} {
		_, err = pgstore.Open(ctx, pool, pgstore.Config{Schema: bad})
		assert.ErrorIs(t, err, pgstore.ErrBadConfig, "%q", bad)
	}
}

// TestSchemasAreSeparate: two schemas in one database are two stores, and
// the longest schema name works, feed included.
func TestSchemasAreSeparate(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	long, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: strings.Repeat("z", 50)})
	require.NoError(t, err)
	got, resyncs := follow(t, long)
	receive(t, resyncs, 10*time.Second, "Follow did not resync once listening")
	ingest(t, long, nil, vote(9, base))
	assert.Equal(t, vote(9, base).Key(), receive(t, got, 5*time.Second, "no vote on the long schema's feed").Key())
	a, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: "bot_a"})
	require.NoError(t, err)
	b, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: "bot_b"})
	require.NoError(t, err)
	assert.Equal(t, "bot_a", a.Schema())
	ingest(t, a, nil, vote(1, base))
	assert.Len(t, ingest(t, b, nil, vote(1, base)), 1)
	st, err := b.Stats(ctx, vote(1, base).PlatformID)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes)
	var _ voterewards.State = a
}
