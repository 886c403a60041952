package pgstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
)

// pg is the package's PostgreSQL: one server, a fresh database per test.
var pg = pgstoretest.New("pgstore")

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

// open returns a store on a fresh database.
func open(t testing.TB, cfg pgstore.Config) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), pg.Pool(t), cfg)
	require.NoError(t, err)
	return s
}

// openPooled returns a store on a fresh database, and the database's pool.
func openPooled(t testing.TB) (*pgstore.Store, *pgxpool.Pool) {
	t.Helper()
	pool := pg.Pool(t)
	s, err := pgstore.Open(context.Background(), pool, pgstore.Config{})
	require.NoError(t, err)
	return s, pool
}

// openPool opens a pool on dbURL (one per process of a test), closed at the
// test's cleanup.
func openPool(t testing.TB, dbURL string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), dbURL)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}
