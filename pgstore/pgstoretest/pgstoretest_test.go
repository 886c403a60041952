package pgstoretest

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var pg = New("pgstore/pgstoretest")

// TestMain says in one line why the tests that start a server skip when
// PostgreSQL is missing.
func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

// TestFreshDatabasePerTest: each Pool is a database of its own, on 127.0.0.1,
// with fsync on, and the server does not run as root.
func TestFreshDatabasePerTest(t *testing.T) {
	ctx := context.Background()
	a, b := pg.Pool(t), pg.Pool(t)
	_, err := a.Exec(ctx, "CREATE TABLE only_in_a (x int)")
	require.NoError(t, err)
	var n int
	require.NoError(t, b.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n))
	assert.Zero(t, n, "b is another database")
	var fsync, addr string
	require.NoError(t, a.QueryRow(ctx, "SHOW fsync").Scan(&fsync))
	assert.Equal(t, "on", fsync)
	require.NoError(t, a.QueryRow(ctx, "SELECT host(inet_server_addr())").Scan(&addr))
	assert.Equal(t, "127.0.0.1", addr)
	if os.Geteuid() == 0 {
		st, err := os.Stat(pg.server(t).dataDir())
		require.NoError(t, err)
		assert.NotZero(t, st.Sys().(*syscall.Stat_t).Uid, "the data dir is not root's")
	}
}

// TestKillKeepsWhatWasCommitted: a SIGKILLed server restarts with every
// committed row, and the server's directory is gone after Stop.
func TestKillKeepsWhatWasCommitted(t *testing.T) {
	s := Start(t).srv
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dbURL := s.database(t)
	c, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	_, err = c.Exec(ctx, "CREATE TABLE kept (x int); INSERT INTO kept SELECT generate_series(1, 100)")
	require.NoError(t, err)
	s.Kill()
	_, err = c.Exec(ctx, "SELECT 1")
	require.Error(t, err, "the server is gone")
	_ = c.Close(ctx)
	require.NoError(t, s.Restart())
	c, err = pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer c.Close(ctx)
	var n int
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM kept").Scan(&n))
	assert.Equal(t, 100, n)
	s.stop()
	_, err = os.Stat(s.Dir)
	assert.True(t, os.IsNotExist(err), "Stop removes the directory")
}
