//go:build unix

package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// The environment of a crash child (TestCrashChild).
const (
	crashChildEnv  = "PGSTORE_CRASH_CHILD" // the handler: "tx" or "plain"
	crashDSNEnv    = "PGSTORE_CRASH_DSN"
	crashSchemaEnv = "PGSTORE_CRASH_SCHEMA" // the store's schema; the app's is "app_" + it
	crashURLEnv    = "PGSTORE_CRASH_URL"
	crashTokenEnv  = "PGSTORE_CRASH_TOKEN"
	crashRoundEnv  = "PGSTORE_CRASH_ROUND"
	crashSeedEnv   = "PGSTORE_CRASH_SEED" // set by hand to replay a run
)

// Crash run figures: 1,000 votes, 30 SIGKILLs, 4 handlers at once.
const (
	crashVotes       = 1000
	crashUsers       = 250
	crashKills       = 30
	crashConcurrency = 4
	crashFirstVotes  = 400 // in the history before the first child starts; 20 more after each kill
	// crashLookback is how far back the child's first poll reads: past the
	// first vote of the set (newVoteSet: 4 votes per voter, 13 h apart).
	crashLookback = time.Duration(crashVotes/crashUsers+1) * 13 * time.Hour
)

// TestCrashChild is the bot process TestExactlyOnceThroughCrashes kills: it
// polls the parent's fake service and rewards each vote with points in the
// bot's own tables, until SIGKILL. With the transactional handler
// ([pgstore.Store.Reward]) the credit commits with the delivered mark; with
// the plain one, the credit commits in a transaction of its own, and the
// plugin records the delivery after the handler returned. The handler prints
// "credited <key>" once its credit is written (before the commit, with the
// transaction), then takes a moment before it returns: the parent kills right
// after such a line, so that kills land between a credit and its record.
func TestCrashChild(t *testing.T) {
	mode := os.Getenv(crashChildEnv)
	if mode == "" {
		t.Skip("run by TestExactlyOnceThroughCrashes")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv(crashDSNEnv))
	require.NoError(t, err)
	schema := os.Getenv(crashSchemaEnv)
	store, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	client, err := topgg.New(os.Getenv(crashTokenEnv), topgg.WithBaseURL(os.Getenv(crashURLEnv)))
	require.NoError(t, err)
	seed, err := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	require.NoError(t, err)
	round, err := strconv.ParseUint(os.Getenv(crashRoundEnv), 10, 64)
	require.NoError(t, err)
	rng := lockedRand(rand.New(rand.NewPCG(seed, round)))
	app, tag := "app_"+schema, "round "+os.Getenv(crashRoundEnv)
	credited := func(v voterewards.Vote) {
		fmt.Println("credited", v.Key())
		time.Sleep(time.Duration(500+rng(3000)) * time.Microsecond)
	}
	var handler voterewards.Handler
	switch mode {
	case "tx":
		handler = store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			if err := creditPoints(ctx, tx, app, tag, v); err != nil {
				return err
			}
			credited(v)
			return nil
		})
	case "plain":
		handler = func(ctx context.Context, v voterewards.Vote) error {
			if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return creditPoints(ctx, tx, app, tag, v) }); err != nil {
				return err
			}
			credited(v)
			return nil
		}
	default:
		t.Fatalf("unknown handler %q", mode)
	}
	p, err := voterewards.New(client, voterewards.Config{
		OnReward: handler, Store: store, Interval: 10 * time.Millisecond, Lookback: crashLookback,
		Concurrency: crashConcurrency, RetryDelay: time.Millisecond,
	})
	require.NoError(t, err)
	fmt.Println("started")
	require.NoError(t, p.Run(ctx)) // until SIGKILL
}

// lockedRand is rng.IntN safe for the handler's concurrent calls.
func lockedRand(rng *rand.Rand) func(n int) int {
	ch := make(chan struct{}, 1)
	return func(n int) int {
		ch <- struct{}{}
		defer func() { <-ch }()
		return rng.IntN(n)
	}
}

// TestExactlyOnceThroughCrashes runs a bot that rewards 1,000 votes with
// points in its own tables, SIGKILLs it 30 times at random moments and
// restarts it each time, twice: with the transactional handler every voter
// ends with exactly the sum of their votes' weights (0 lost, 0 twice); with
// a handler that credits in a transaction of its own, some votes are
// credited twice (the duplicates the docs warn of), which shows that the
// exactness is the transaction's doing.
func TestExactlyOnceThroughCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes for several seconds")
	}
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("seed %d (replay: %s=%d)", seed, crashSeedEnv, seed)
	dsn := startPostgres(t)
	pool := connect(t, dsn)

	// Both runs at once, each in its own schemas, on one server.
	var results [2]crashResult
	t.Run("group", func(t *testing.T) {
		for i, mode := range []string{"tx", "plain"} {
			t.Run(mode, func(t *testing.T) {
				t.Parallel()
				results[i] = runCrashes(t, pool, dsn, mode, seed+uint64(i))
			})
		}
	})
	tx, plain := results[0], results[1]
	require.False(t, t.Failed())
	assert.Zero(t, tx.lost+tx.duplicates, "the transactional handler lost or doubled votes")
	assert.Positive(t, tx.inFlight,
		"no kill caught a reward between its credit and its commit: the transactional run proves nothing")
	assert.Positive(t, plain.duplicates,
		"the plain handler credited no vote twice: the kills missed the moment between a credit and its record, and the test proves nothing")
	for _, r := range []struct {
		name string
		crashResult
	}{{"transactional handler", tx}, {"plain handler", plain}} {
		t.Logf("%s: %d votes, %d kills (%d right after a credit; %d credits caught uncommitted), %d lost, %d credited twice, %v",
			r.name, r.votes, r.kills, r.afterCredit, r.inFlight, r.lost, r.duplicates, r.took.Round(time.Millisecond))
	}
}

// crashResult is what one run of the crash test saw.
type crashResult struct {
	votes       int
	kills       int
	afterCredit int // kills sent right after a "credited" line
	inFlight    int // credits written (printed) but not committed when the kill came
	lost        int // votes never credited
	duplicates  int // credits beyond the first, all votes together
	took        time.Duration
}

// runCrashes runs the crash test with one handler (mode) and checks the
// points it can promise: none lost with either handler; none twice, and
// points exact, with the transactional one.
func runCrashes(t *testing.T, pool *pgxpool.Pool, dsn, mode string, seed uint64) crashResult {
	start := time.Now()
	rng := rand.New(rand.NewPCG(seed, 0))
	schema := "crash_" + mode
	app := "app_" + schema
	createApp(t, pool, app)
	srv, err := topggtest.NewServer(topggtest.WithPageSize(50))
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	set := newVoteSet(crashVotes, crashUsers, rng)
	srv.AddVote(set.votes[:crashFirstVotes]...)
	added := crashFirstVotes

	env := func(round int) []string {
		return []string{crashChildEnv + "=" + mode, crashDSNEnv + "=" + dsn, crashSchemaEnv + "=" + schema,
			crashURLEnv + "=" + srv.URL, crashTokenEnv + "=" + srv.Token(), crashRoundEnv + "=" + strconv.Itoa(round),
			crashSeedEnv + "=" + strconv.FormatUint(seed, 10)}
	}
	res := crashResult{votes: crashVotes}
	var printed [][]testlog.Line // per round, the votes the child credited
	for round := range crashKills {
		c := testlog.StartChild(t, "round "+strconv.Itoa(round), "TestCrashChild", env(round)...)
		if rng.IntN(3) == 0 {
			// Any moment: starting, loading, polling, ingesting, delivering.
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		} else {
			// Right after a credit: before its commit (tx) or its record (plain).
			n := 1 + rng.IntN(15)
			if c.WaitLines("credited ", n, 15*time.Second) >= n {
				res.afterCredit++
			}
		}
		require.True(t, c.Alive(), "round %d: the child exited by itself:\n%s", round, c.Output())
		require.NoError(t, c.Kill())
		res.kills++
		printed = append(printed, c.Lines("credited "))
		if next := min(added+20, crashVotes); next > added {
			srv.AddVote(set.votes[added:next]...)
			added = next
		}
	}
	srv.AddVote(set.votes[added:]...)

	// A last run, not killed until every vote is credited.
	c := testlog.StartChild(t, "the last child", "TestCrashChild", env(crashKills)...)
	require.Eventually(t, func() bool {
		n, err := distinctCredited(context.Background(), pool, app)
		return err == nil && n == crashVotes
	}, 30*time.Second, 20*time.Millisecond, "not every vote was credited; %s", c.Output())
	require.NoError(t, c.Kill())
	res.took = time.Since(start)
	res.inFlight = uncommitted(t, pool, app, printed)
	return checkTally(t, pool, mode, app, schema, set, res)
}

// checkTally reads the bot's tables after a run and checks them against the
// votes: every vote credited; with the transactional handler, each once,
// every voter's points exact, and nothing left pending in the store.
func checkTally(t *testing.T, pool *pgxpool.Pool, mode, app, schema string, set voteSet, res crashResult) crashResult {
	got := readTally(t, pool, app)
	var dupWeight int64 // the weight credited beyond each vote's first credit
	for i, k := range set.keys {
		n := got.credits[k]
		if n == 0 {
			res.lost++
		}
		res.duplicates += max(n-1, 0)
		dupWeight += int64(max(n-1, 0) * set.votes[i].Weight)
	}
	assert.Len(t, got.credits, len(set.keys), "%s: credits of votes the service never had", mode)
	assert.Zero(t, res.lost, "%s: votes never credited", mode)
	if mode != "tx" {
		// The plain handler's points are off by exactly its duplicates.
		var extra int64
		for u, want := range set.want {
			assert.GreaterOrEqual(t, got.points[u], want, "%s: voter %s lost points", mode, u)
			extra += got.points[u] - want
		}
		assert.Equal(t, dupWeight, extra, "%s: the points credited beyond the weights are not the duplicates'", mode)
		return res
	}
	assert.Zero(t, res.duplicates, "tx: votes credited twice")
	assert.Equal(t, set.want, got.points, "tx: points differ from the sum of each voter's weights")
	store, err := pgstore.Open(context.Background(), pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	assert.Empty(t, snap.Pending, "tx: every vote credited, yet some are pending")
	return res
}

// uncommitted counts the credits a child printed (written, in its
// transaction) that its round's kill left uncommitted: with the
// transactional handler, the rewards a kill caught between the credit and
// the commit of the delivered mark.
func uncommitted(t *testing.T, pool *pgxpool.Pool, app string, printed [][]testlog.Line) int {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT tag, vote_key FROM `+pgx.Identifier{app}.Sanitize()+`.credits`)
	require.NoError(t, err)
	committed := map[[2]string]bool{}
	var tag, key string
	_, err = pgx.ForEachRow(rows, []any{&tag, &key}, func() error { committed[[2]string{tag, key}] = true; return nil })
	require.NoError(t, err)
	n := 0
	for round, keys := range printed {
		for _, k := range keys {
			if !committed[[2]string{"round " + strconv.Itoa(round), k.Text}] {
				n++
			}
		}
	}
	return n
}

// The bot of the crash and fleet tests keeps its own economy in PostgreSQL:
// app.points, one row per voter, credited with each vote's weight; and
// app.credits, one row per credit, so that a vote credited twice shows.

// execer is what creditPoints writes through: a pgx.Tx, or a pool for a write in
// its own transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// createApp creates the bot's tables in schema app.
func createApp(t *testing.T, pool *pgxpool.Pool, app string) {
	t.Helper()
	id := pgx.Identifier{app}.Sanitize()
	_, err := pool.Exec(context.Background(), `CREATE SCHEMA `+id+`;
		CREATE TABLE `+id+`.points (user_id text PRIMARY KEY, points bigint NOT NULL);
		CREATE TABLE `+id+`.credits (id bigserial PRIMARY KEY, vote_key text NOT NULL, user_id text NOT NULL,
			weight int NOT NULL, tag text NOT NULL)`)
	require.NoError(t, err)
}

// creditPoints credits v's weight to its voter, and records the credit with tag
// (the process that made it).
func creditPoints(ctx context.Context, db execer, app, tag string, v voterewards.Vote) error {
	id := pgx.Identifier{app}.Sanitize()
	if _, err := db.Exec(ctx, `INSERT INTO `+id+`.credits (vote_key, user_id, weight, tag) VALUES ($1, $2, $3, $4)`,
		v.Key(), v.PlatformID, v.Weight, tag); err != nil {
		return fmt.Errorf("record credit: %w", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO `+id+`.points (user_id, points) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET points = points.points + EXCLUDED.points`, v.PlatformID, v.Weight); err != nil {
		return fmt.Errorf("credit points: %w", err)
	}
	return nil
}

// tally is what the bot's tables hold at the end of a run.
type tally struct {
	points  map[string]int64 // per voter
	credits map[string]int   // per vote key: how many times it was credited
	rows    int              // credits in all
}

func readTally(t *testing.T, pool *pgxpool.Pool, app string) tally {
	t.Helper()
	ctx := context.Background()
	id := pgx.Identifier{app}.Sanitize()
	out := tally{points: map[string]int64{}, credits: map[string]int{}}
	rows, err := pool.Query(ctx, `SELECT user_id, points FROM `+id+`.points`)
	require.NoError(t, err)
	var user string
	var pts int64
	_, err = pgx.ForEachRow(rows, []any{&user, &pts}, func() error { out.points[user] = pts; return nil })
	require.NoError(t, err)
	rows, err = pool.Query(ctx, `SELECT vote_key, count(*) FROM `+id+`.credits GROUP BY vote_key`)
	require.NoError(t, err)
	var key string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&key, &n}, func() error { out.credits[key] = n; out.rows += n; return nil })
	require.NoError(t, err)
	return out
}

// distinctCredited returns how many votes were credited at least once.
func distinctCredited(ctx context.Context, pool *pgxpool.Pool, app string) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(DISTINCT vote_key) FROM `+pgx.Identifier{app}.Sanitize()+`.credits`).Scan(&n)
	return n, err
}

// voteSet is the votes a test adds to the fake service, in creation order:
// users voters, each voting every 13 hours (so that no two of a voter's
// votes are one vote), weights 1 or 2 at random.
type voteSet struct {
	votes []topggtest.Vote
	want  map[string]int64 // per voter (PlatformID): the sum of the weights
	keys  []string         // every vote's Key
}

func newVoteSet(n, users int, rng *rand.Rand) voteSet {
	perUser := (n + users - 1) / users
	base := time.Now().Add(-time.Duration(perUser)*13*time.Hour - time.Hour).UTC().Truncate(time.Second)
	s := voteSet{want: map[string]int64{}}
	for i := range n {
		u, round := i%users, i/users
		v := topggtest.Vote{
			UserID: fmt.Sprintf("7%017d", u), PlatformID: fmt.Sprintf("3%017d", u), Weight: 1 + rng.IntN(2),
			CreatedAt: base.Add(time.Duration(round)*13*time.Hour + time.Duration(i)*time.Second),
		}
		s.votes = append(s.votes, v)
		s.want[v.PlatformID] += int64(v.Weight)
		s.keys = append(s.keys, voterewards.Vote{Vote: v}.Key())
	}
	return s
}

// startPostgres starts a PostgreSQL server of the test's own (the children
// of the crash and fleet tests load it hard) and returns the URL of a fresh
// database on it: no secret in it (trust auth on 127.0.0.1).
func startPostgres(t *testing.T) string {
	t.Helper()
	return pgstoretest.Start(t).URL(t)
}

// connect opens a pool on dsn, closed at the test's cleanup.
func connect(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	return openPool(t, dsn)
}
