//go:build unix

package pgstore_test

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// The environment of a fleet child (TestFleetChild).
const (
	fleetChildEnv = "PGSTORE_FLEET_CHILD" // the process's name
	fleetDSNEnv   = "PGSTORE_FLEET_DSN"
	fleetRedisEnv = "PGSTORE_FLEET_REDIS"
	fleetURLEnv   = "PGSTORE_FLEET_URL"
	fleetTokenEnv = "PGSTORE_FLEET_TOKEN"
	fleetHoldEnv  = "PGSTORE_FLEET_HOLD" // how long a handler takes after its credit (default 0.5-3 ms)
)

// Fleet run figures: 3 processes, 600 votes (the last 200 added during the
// kills), 4 leaders killed mid-delivery.
const (
	fleetProcesses = 3
	fleetVotes     = 600
	fleetUsers     = 200
	fleetFirst     = 400
	fleetKills     = 4
	fleetSchema    = "topgg"
	fleetBot       = "pgfleet"
	fleetApp       = "app_fleet"
	fleetLeaseTTL  = time.Second
)

// TestFleetChild is one process of the fleet TestFleetOnPostgres runs: a
// plugin in fleet mode (the lease in the parent's redis-server) over the
// PostgreSQL store every process shares, fenced by the lease, rewarding each
// vote with points in the store's transaction. It prints "credited <key>
// <token>" in the handler, before the commit, until SIGKILL.
func TestFleetChild(t *testing.T) {
	name := os.Getenv(fleetChildEnv)
	if name == "" {
		t.Skip("run by TestFleetOnPostgres")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv(fleetDSNEnv))
	require.NoError(t, err)
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(fleetRedisEnv), ContextTimeoutEnabled: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}}) // as fleet.NewUniversalClient does
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("process", name)
	f, err := fleet.New(rdb, fleet.Config{Bot: fleetBot, ShardCount: 1, LeaseTTL: fleetLeaseTTL, Logger: log})
	require.NoError(t, err)
	lease := f.Lease()
	fence := func() int64 { return lease.State().Token } // the token a credit is tagged with
	// TxTimeout as the lease's TTL: a leader paused in a transaction stalls
	// the next one that long at most.
	store, err := pgstore.Open(ctx, pool, pgstore.Config{Schema: fleetSchema, TxTimeout: fleetLeaseTTL, Logger: log})
	require.NoError(t, err)
	client, err := topgg.New(os.Getenv(fleetTokenEnv), topgg.WithBaseURL(os.Getenv(fleetURLEnv)))
	require.NoError(t, err)
	hold, _ := time.ParseDuration(os.Getenv(fleetHoldEnv))
	reward := store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		token := fence()
		if err := creditPoints(ctx, tx, fleetApp, name+" "+strconv.FormatInt(token, 10), v); err != nil {
			return err
		}
		fmt.Println("credited", v.Key(), token)
		time.Sleep(cmp.Or(hold, time.Duration(500+rand.IntN(2500))*time.Microsecond))
		return nil
	})
	// New hands store the lease's fence (WithFleet, WithState).
	p, err := plugin.New(client, plugin.Config{
		Autopost: "off", SyncCommands: new(false), VotePollInterval: new(20 * time.Millisecond),
		VoteLookback: time.Duration(fleetVotes/fleetUsers+1) * 13 * time.Hour, VoteRetryDelay: time.Millisecond,
	}, plugin.WithFleet(f), plugin.WithState(store), plugin.WithRewardHandler(reward), plugin.WithLogger(log))
	require.NoError(t, err)
	fmt.Println("started")
	require.NoError(t, p.Run(ctx)) // until SIGKILL
}

// TestFleetOnPostgres runs a bot as 3 processes sharing one PostgreSQL store
// and one redis-server (the lease), rewarding votes with points in the
// store's transaction, and SIGKILLs whichever leads, mid-delivery, 4 times
// (a new process replaces each): every voter ends with exactly the sum of
// their votes' weights, and the credits, in the order they were written,
// come from one leader term at a time, the terms in token order.
func TestFleetOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes for several seconds")
	}
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	fr := newFleetRun(t, rng, 0)
	start := time.Now()
	var killedTokens []string
	for range fleetKills {
		leader, token := awaitCredits(t, fr.procs, 1+rng.IntN(30))
		require.NoError(t, leader.Kill())
		fr.killed[leader] = true
		killedTokens = append(killedTokens, token)
		fr.start()
		fr.addVotes((fleetVotes - fleetFirst) / fleetKills)
	}
	fr.awaitAllCredited()
	took := time.Since(start)
	fr.checkExact()
	terms := checkTermsInOrder(t, fr.pool)
	t.Logf("fleet on PostgreSQL: %d processes, %d leaders SIGKILLed mid-delivery (tokens %v), %d votes credited once each "+
		"by %d leader terms, 0 twice, in %v", fleetProcesses, fleetKills, killedTokens, fleetVotes, terms, took.Round(time.Millisecond))
}

// fleetRun is the world of a fleet test: PostgreSQL with the bot's tables,
// a redis-server, the fake service with the first votes of set, and the
// fleet's processes.
type fleetRun struct {
	t      *testing.T
	dsn    string
	pool   *pgxpool.Pool
	rds    *redistest.Server
	srv    *topggtest.Server
	set    voteSet
	added  int           // votes of set in srv
	hold   time.Duration // how long each handler takes after its credit; 0: 0.5-3 ms
	procs  []*testlog.Child
	killed map[*testlog.Child]bool
}

// newFleetRun starts the servers and fleetProcesses processes, whose
// handlers take hold after their credit (0: 0.5-3 ms).
func newFleetRun(t *testing.T, rng *rand.Rand, hold time.Duration) *fleetRun {
	t.Helper()
	dsn := startPostgres(t)
	fr := &fleetRun{t: t, dsn: dsn, pool: connect(t, dsn), rds: redistest.Start(t),
		set: newVoteSet(fleetVotes, fleetUsers, rng), hold: hold, killed: map[*testlog.Child]bool{}}
	createApp(t, fr.pool, fleetApp)
	var err error
	fr.srv, err = topggtest.NewServer(topggtest.WithPageSize(50))
	require.NoError(t, err)
	t.Cleanup(fr.srv.Close)
	fr.addVotes(fleetFirst)
	for range fleetProcesses {
		fr.start()
	}
	return fr
}

// start starts one more process of the fleet.
func (fr *fleetRun) start() *testlog.Child {
	name := fmt.Sprintf("p%d", len(fr.procs))
	// More connections than handlers at once (4): a handler waiting for a
	// vote's row lock holds its connection, and the poll needs one too.
	c := testlog.StartChild(fr.t, name, "TestFleetChild", fleetChildEnv+"="+name,
		fleetDSNEnv+"="+fr.dsn+"&pool_max_conns=10", fleetRedisEnv+"="+fr.rds.Addr(), fleetURLEnv+"="+fr.srv.URL,
		fleetTokenEnv+"="+fr.srv.Token(), fleetHoldEnv+"="+fr.hold.String())
	fr.procs = append(fr.procs, c)
	return c
}

// addVotes adds the next n votes of the set to the service (fewer when the
// set runs out) and returns the last one added.
func (fr *fleetRun) addVotes(n int) topggtest.Vote {
	next := min(fr.added+n, len(fr.set.votes))
	fr.srv.AddVote(fr.set.votes[fr.added:next]...)
	fr.added = next
	return fr.set.votes[next-1]
}

// awaitAllCredited adds the rest of the votes and waits until every vote
// was credited, and checks that no process of the fleet exited by itself.
func (fr *fleetRun) awaitAllCredited() {
	fr.t.Helper()
	fr.addVotes(len(fr.set.votes))
	require.Eventually(fr.t, func() bool {
		n, err := distinctCredited(context.Background(), fr.pool, fleetApp)
		return err == nil && n == len(fr.set.votes)
	}, 30*time.Second, 20*time.Millisecond, "not every vote was credited")
	for _, c := range fr.procs {
		require.True(fr.t, fr.killed[c] || c.Alive(), "a process of the fleet exited by itself:\n%s", c.Output())
	}
}

// checkExact checks the bot's tables: every vote credited once, every
// voter's points the sum of their votes' weights.
func (fr *fleetRun) checkExact() {
	fr.t.Helper()
	got := readTally(fr.t, fr.pool, fleetApp)
	assert.Zero(fr.t, got.rows-len(got.credits), "votes credited twice")
	assert.Len(fr.t, got.credits, len(fr.set.votes))
	assert.Equal(fr.t, fr.set.want, got.points, "points differ from the sum of each voter's weights")
}

// awaitCredits waits until one of procs (the leader) printed n more
// "credited" lines than before the call, and returns it with the token of
// its last credit.
func awaitCredits(t *testing.T, procs []*testlog.Child, n int) (*testlog.Child, string) {
	t.Helper()
	before := make([]int, len(procs))
	for i, c := range procs {
		before[i] = len(c.Lines("credited "))
	}
	var found *testlog.Child
	var token string
	require.Eventually(t, func() bool {
		for i, c := range procs {
			if lines := c.Lines("credited "); c.Alive() && len(lines)-before[i] >= n {
				last := lines[len(lines)-1].Text
				found, token = c, last[strings.LastIndexByte(last, ' ')+1:]
				return true
			}
		}
		return false
	}, 30*time.Second, time.Millisecond, "no leader credited %d votes", n)
	return found, token
}

// checkTermsInOrder checks that the credits, in the order they were written,
// come from one leader term after another (never a term's credit after a
// newer term's: two leaders never credited at once), each credit from a
// process that led (token > 0), and returns how many terms credited.
func checkTermsInOrder(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT tag FROM `+fleetApp+`.credits ORDER BY id`)
	require.NoError(t, err)
	var tag string
	var last int64
	terms := 0
	_, err = pgx.ForEachRow(rows, []any{&tag}, func() error {
		_, tok, _ := strings.Cut(tag, " ")
		token, err := strconv.ParseInt(tok, 10, 64)
		if err != nil {
			return err
		}
		assert.Positive(t, token, "a credit by a process that did not lead: %s", tag)
		assert.GreaterOrEqual(t, token, last, "a credit of an older term after a newer one's: %s", tag)
		if token != last {
			terms++
		}
		last = max(last, token)
		return nil
	})
	require.NoError(t, err)
	return terms
}

// TestFleetOnPostgresPausedLeader pauses the leader of a 3-process fleet
// (SIGSTOP) in the middle of rewarding, with credits written in open
// transactions, until another process holds the lease. The new leader must
// credit votes within a bound (5x the lease's TTL, pgstore.Config.TxTimeout
// being the TTL) while the old one is still stopped: PostgreSQL aborts the
// paused transactions, releasing their locks. Then the paused leader is
// continued: it commits nothing more (its transactions were aborted, and the
// new term raised the fence), each vote is credited once and every voter's
// points are exact.
func TestFleetOnPostgresPausedLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("pauses child processes for several seconds")
	}
	t.Parallel()
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	fr := newFleetRun(t, rng, 50*time.Millisecond) // the pause lands inside open transactions
	leader, token := awaitCredits(t, fr.procs, 1+rng.IntN(20))
	require.NoError(t, leader.Signal(syscall.SIGSTOP))
	paused, err := strconv.ParseInt(token, 10, 64)
	require.NoError(t, err)
	rdb := fr.rds.Client(t)
	require.Eventually(t, func() bool {
		v, err := rdb.Get(ctx, fleet.Key(fleetBot, "lease")).Result()
		_, tok, _ := strings.Cut(v, ":")
		n, _ := strconv.ParseInt(tok, 10, 64)
		return err == nil && n > paused
	}, 10*fleetLeaseTTL, 10*time.Millisecond, "no process took the lease of the paused leader")
	newLease := time.Now()
	name := leader.Name
	before := committedBy(t, fr.pool, name, paused)
	require.Eventually(t, func() bool { return creditsAfter(t, fr.pool, paused) > 0 }, fleetStallBound, 10*time.Millisecond,
		"the new leader credited nothing within %v while the old one was paused", fleetStallBound)
	stalled := time.Since(newLease)
	require.Equal(t, before, committedBy(t, fr.pool, name, paused), "the paused leader committed while stopped")
	require.NoError(t, leader.Signal(syscall.SIGCONT))

	fr.awaitAllCredited()
	fr.checkExact()
	after := committedBy(t, fr.pool, name, paused)
	inFlight := 0
	for _, line := range leader.Lines("credited ") {
		if key, _, _ := strings.Cut(line.Text, " "); !before[key] {
			inFlight++
		}
	}
	assert.Positive(t, inFlight, "the pause caught no credit in an open transaction: the test proves nothing")
	assert.Equal(t, before, after, "the paused leader committed once continued: its transactions were not aborted, "+
		"or its term was not fenced")
	t.Logf("paused leader (token %s): %d credits in open transactions when paused past its lease, %d committed by it "+
		"once continued; the new leader's first credit %v after it took the lease; %d votes credited once each",
		token, inFlight, len(after)-len(before), stalled.Round(time.Millisecond), len(fr.set.votes))
}

// fleetStallBound is how long a paused leader may keep the new one from
// crediting: its transactions' idle time (TxTimeout = the lease's TTL), the
// new term's start, and slack for a loaded machine.
const fleetStallBound = 5 * fleetLeaseTTL

// creditsAfter returns how many credits of terms newer than token were
// committed.
func creditsAfter(t *testing.T, pool *pgxpool.Pool, token int64) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM `+fleetApp+`.credits
		WHERE split_part(tag, ' ', 2)::bigint > $1`, token).Scan(&n))
	return n
}

// committedBy returns the votes whose credit process name committed in a
// term no newer than token: once continued, the paused process may win a
// later term and credit votes in it, rightly.
func committedBy(t *testing.T, pool *pgxpool.Pool, name string, token int64) map[string]bool {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT vote_key FROM `+fleetApp+`.credits
		WHERE split_part(tag, ' ', 1) = $1 AND split_part(tag, ' ', 2)::bigint <= $2`, name, token)
	require.NoError(t, err)
	out := map[string]bool{}
	for rows.Next() {
		var key string
		require.NoError(t, rows.Scan(&key))
		out[key] = true
	}
	require.NoError(t, rows.Err())
	return out
}
