package pgstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/pgtest"
	"github.com/dblkit/go-topgg/pgstore"
)

// pg is the package's PostgreSQL: one server, a fresh database per test.
var pg = pgtest.New("pgstore")

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

// open returns a store on a fresh database.
func open(t testing.TB, cfg pgstore.Config) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), pg.Pool(t), cfg)
	require.NoError(t, err)
	return s
}
