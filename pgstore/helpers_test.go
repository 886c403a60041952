package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// base is the tests' fixed time.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// vote makes a sanitized vote of voter u created at created.
func vote(u int, created time.Time) voterewards.Vote {
	return voterewards.Vote{Vote: topgg.Vote{
		UserID: fmt.Sprintf("7%017d", u), PlatformID: fmt.Sprintf("3%017d", u), Weight: 1 + u%2,
		CreatedAt: created, ExpiresAt: created.Add(voterewards.VoteLifetime),
	}, Origin: voterewards.OriginWebhook}
}

func ingest(t *testing.T, s voterewards.Store, cp *voterewards.Checkpoint, votes ...voterewards.Vote) []voterewards.Vote {
	t.Helper()
	added, err := s.Ingest(context.Background(), cp, votes, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	return added
}

// lease is a settable fence token, as a fleet's lease would give it.
type lease struct{ tok atomic.Int64 }

func (l *lease) token() int64 { return l.tok.Load() }

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// twoTerms opens two stores on pool as the processes of two leaders, each
// fenced by its own lease: the older one's token is 1, the newer one's
// newTok (0: it has not led yet). cfg's other fields apply to both.
func twoTerms(t *testing.T, pool *pgxpool.Pool, newTok int64, cfg pgstore.Config) (old, cur *pgstore.Store, oldL, newL *lease) {
	t.Helper()
	oldL, newL = &lease{}, &lease{}
	oldL.tok.Store(1)
	newL.tok.Store(newTok)
	var err error
	old, err = pgstore.Open(context.Background(), pool, cfg)
	require.NoError(t, err)
	cur, err = pgstore.Open(context.Background(), pool, cfg)
	require.NoError(t, err)
	return fenced(t, old, oldL.token), fenced(t, cur, newL.token), oldL, newL
}

// fenced gives s the fence f (as plugin.New does in a fleet) and returns it.
func fenced(t testing.TB, s *pgstore.Store, f voterewards.Fence) *pgstore.Store {
	t.Helper()
	require.NoError(t, s.UseFence(f))
	return s
}

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

// fakeTopgg starts a fake Top.gg server for the test and returns it with a
// client of it.
func fakeTopgg(t *testing.T, opts ...topggtest.Option) (*topggtest.Server, *topgg.Client) {
	t.Helper()
	srv, err := topggtest.NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	client, err := srv.NewClient()
	require.NoError(t, err)
	return srv, client
}

// rewardStore opens a store on pool with cfg and makes its points table.
func rewardStore(t *testing.T, pool *pgxpool.Pool, cfg pgstore.Config) *pgstore.Store {
	t.Helper()
	store, err := pgstore.Open(context.Background(), pool, cfg)
	require.NoError(t, err)
	pointsTable(t, pool)
	return store
}

// addHistory adds a vote of weight weight(u), an hour old, for each of users
// voters to srv's history.
func addHistory(srv *topggtest.Server, users int, weight func(u int) int) {
	for u := range users {
		srv.AddVote(topggtest.Vote{UserID: fmt.Sprintf("8%017d", u), PlatformID: fmt.Sprintf("3%017d", u),
			Weight: weight(u), CreatedAt: time.Now().Add(-time.Hour)})
	}
}

// untilCleanup runs job until the test ends, then cancels it and expects it
// to return nil within 10 s.
func untilCleanup(t *testing.T, name string, job func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- job(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not return after its context ended", name)
		}
	})
}
