package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/pgstore/pgstoretest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// pointsTable makes the bot's own table, credited in the reward's transaction.
func pointsTable(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	_, err := pool.Exec(context.Background(), "CREATE TABLE points (voter text PRIMARY KEY, points int NOT NULL)")
	require.NoError(t, err)
}

// credit is a TxHandler adding the vote's weight to its voter's points.
func credit(calls *int) pgstore.TxHandler {
	return func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		*calls++
		_, err := tx.Exec(ctx, `INSERT INTO points VALUES ($1, $2)
			ON CONFLICT (voter) DO UPDATE SET points = points.points + EXCLUDED.points`, v.PlatformID, v.Weight)
		return err
	}
}

func points(t *testing.T, pool *pgxpool.Pool, voter string) int {
	t.Helper()
	var n int
	err := pool.QueryRow(context.Background(), "SELECT points FROM points WHERE voter = $1", voter).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0
	}
	require.NoError(t, err)
	return n
}

// TestRewardOnce: the handler's write and the done mark are one
// transaction; a second call (a crash before Delivered, a redelivery, another
// leader) finds the mark and does not call the handler.
func TestRewardOnce(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	pointsTable(t, pool)
	v := ingest(t, s, nil, vote(1, base))[0]
	calls := 0
	reward := s.Reward(credit(&calls))
	require.NoError(t, reward(ctx, v))
	require.NoError(t, reward(ctx, v), "a second call after a crash before Delivered")
	assert.Equal(t, 1, calls, "the handler ran once")
	assert.Equal(t, v.Weight, points(t, pool, v.PlatformID))

	require.NoError(t, s.Delivered(ctx, v, true))
	require.NoError(t, reward(ctx, v), "a redelivery after Delivered")
	assert.Equal(t, 1, calls)
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Pending)
	require.Len(t, snap.Expiries, 1)
}

// TestRewardFailureRollsBack: a failing handler's writes roll back, the
// vote is not marked, and the retry rewards it once; the handler's error
// comes back as it returned it.
func TestRewardFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	pointsTable(t, pool)
	v := ingest(t, s, nil, vote(1, base))[0]
	boom := errors.New("boom")
	calls := 0
	failing := s.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		require.NoError(t, credit(&calls)(ctx, tx, v))
		return boom
	})
	assert.ErrorIs(t, failing(ctx, v), boom)
	assert.Zero(t, points(t, pool, v.PlatformID), "the failed handler's write rolled back")

	panicking := s.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		require.NoError(t, credit(&calls)(ctx, tx, v))
		panic("handler bug")
	})
	assert.Panics(t, func() { _ = panicking(ctx, v) })
	assert.Zero(t, points(t, pool, v.PlatformID), "the panicking handler's write rolled back")

	require.NoError(t, s.Reward(credit(&calls))(ctx, v))
	assert.Equal(t, v.Weight, points(t, pool, v.PlatformID), "the retry rewards once")
}

// TestExpiryOnce: the expiry handler has its own mark; Delivered does not
// make an expiry handled by it pending again.
func TestExpiryOnce(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgstore.Config{})
	v := ingest(t, s, nil, vote(1, base))[0]
	rewards, expiries := 0, 0
	require.NoError(t, s.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { rewards++; return nil })(ctx, v))
	require.NoError(t, s.Delivered(ctx, v, true))
	expiry := s.Expiry(func(context.Context, pgx.Tx, voterewards.Vote) error { expiries++; return nil })
	require.NoError(t, expiry(ctx, v))
	require.NoError(t, expiry(ctx, v))
	assert.Equal(t, 1, expiries)
	require.NoError(t, s.Delivered(ctx, v, true), "a repeated Delivered")
	snap, err := s.Load(ctx)
	require.NoError(t, err)
	require.Len(t, snap.Expiries, 1, "the expiry stays pending until Expired")
	require.NoError(t, s.Expired(ctx, v))
	require.NoError(t, s.Delivered(ctx, v, true), "Delivered again after the expiry was handled")
	snap, err = s.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Expiries, "an expiry handled by Expiry is not pending again")
	assert.Equal(t, 1, rewards)
}

// TestTxHandlerMisuse: a nil TxHandler and a vote the store does not hold
// are errors, not panics or silence. Reward(nil) and Expiry(nil) are nil,
// so that the Poller refuses them when it is made, not at each vote.
func TestTxHandlerMisuse(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgstore.Config{})
	assert.Nil(t, s.Reward(nil), "Reward(nil)")
	assert.Nil(t, s.Expiry(nil), "Expiry(nil)")
	_, client := fakeTopgg(t)
	_, err := voterewards.New(client, voterewards.Config{Store: s, OnReward: s.Reward(nil)})
	assert.Error(t, err, "a Poller rewarding with Reward(nil)")
	called := false
	err = s.Reward(func(context.Context, pgx.Tx, voterewards.Vote) error { called = true; return nil })(ctx, vote(1, base))
	assert.ErrorIs(t, err, pgstore.ErrUnknownVote)
	assert.False(t, called)
}

// processes opens n stores on one database, each on a pool of its own, as n
// processes would.
func processes(t *testing.T, n int) []*pgstore.Store {
	t.Helper()
	dbURL := pg.URL(t)
	out := make([]*pgstore.Store, n)
	for i := range out {
		s, err := pgstore.Open(context.Background(), openPool(t, dbURL), pgstore.Config{})
		require.NoError(t, err)
		out[i] = s
	}
	return out
}

// TestLedgerAcrossProcesses: processes ingest the votes of the same voters
// at once, each vote from every process (webhook and history in each): each
// vote is counted once and the ledger equals Stats.Add folded over the
// votes in the order they were admitted.
func TestLedgerAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	procs := processes(t, 3)
	const voters, rounds = 4, 12
	var mu sync.Mutex
	admitted := map[string][]voterewards.Vote{} // per voter, in the order of the returned Stats
	var wg sync.WaitGroup
	for _, s := range procs {
		wg.Go(func() {
			for r := range rounds {
				for u := range voters {
					// Every other vote comes later than the grace: the streak restarts.
					at := time.Duration(r)*voterewards.VoteLifetime + time.Duration(r/2)*30*time.Hour
					v := vote(u, base.Add(at))
					added, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
					if assert.NoError(t, err) && len(added) == 1 {
						mu.Lock()
						admitted[v.PlatformID] = append(admitted[v.PlatformID], added[0])
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	for u := range voters {
		id := vote(u, base).PlatformID
		got := admitted[id]
		require.Len(t, got, rounds, "each vote admitted once, by one process")
		// The Stats each Ingest returned say the order of admission.
		byVotes := make([]voterewards.Vote, rounds)
		for _, v := range got {
			byVotes[v.Stats.Votes-1] = v
		}
		var want voterewards.Stats
		for _, v := range byVotes {
			plain := v
			plain.Stats = voterewards.Stats{}
			want = want.Add(plain, voterewards.DefaultStreakGrace)
			assert.Equal(t, want, v.Stats, "the Stats given with vote %s", v.Key())
		}
		st, err := procs[0].Stats(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, want, st)
	}
}

// TestMonthsOfOneBatch: one Ingest that turns a voter's month and brings
// two late votes of the month it turned from writes that month's row once,
// with all three: one upsert may not touch a row twice.
func TestMonthsOfOneBatch(t *testing.T) {
	s := open(t, pgstore.Config{})
	day := 24 * time.Hour
	feb10 := time.Date(2026, 2, 10, 12, 0, 0, 0, time.UTC)
	ingest(t, s, nil, vote(2, feb10))
	mar1, feb20, feb15 := vote(2, feb10.Add(19*day)), vote(2, feb10.Add(10*day)), vote(2, feb10.Add(5*day))
	require.Len(t, ingest(t, s, nil, mar1, feb20, feb15), 3)
	for _, c := range []struct {
		month time.Time
		want  voterewards.Standing
	}{
		{feb10, voterewards.Standing{UserID: mar1.PlatformID, Votes: 3, Total: 3, ReachedAt: feb20.CreatedAt}},
		{mar1.CreatedAt, voterewards.Standing{UserID: mar1.PlatformID, Votes: 1, Total: 1, ReachedAt: mar1.CreatedAt}},
	} {
		got, err := s.Leaderboard(context.Background(), c.month, 10)
		require.NoError(t, err)
		assert.Equal(t, []voterewards.Standing{c.want}, got, "the board of %v", c.month)
	}
}

// TestConcurrentIngestsShareOneCommit: Ingests that arrive while another
// commits are written together, in one transaction, each caller given its
// own votes; a vote two of them bring is added once.
func TestConcurrentIngestsShareOneCommit(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	// Hold voter 0's lock: its Ingest takes the turn and waits on it.
	release := holdVoterLock(t, pool, s, vote(0, base).PlatformID)
	const callers = 6
	added := make([][]voterewards.Vote, callers)
	var wg sync.WaitGroup
	for i := range callers {
		v := vote(min(i, callers-2), base) // the last two bring the same vote
		wg.Go(func() {
			got, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
			assert.NoError(t, err)
			added[i] = got
		})
		if i == 0 {
			requireLockWaiter(t, pool)
		}
	}
	require.Eventually(t, func() bool { return pgstore.Queued(s) == callers-1 }, 10*time.Second, time.Millisecond, "the others wait")
	release()
	wg.Wait()
	var keys []string
	for i, got := range added {
		for _, v := range got {
			assert.Equal(t, vote(min(i, callers-2), base).Key(), v.Key(), "caller %d got its own vote", i)
			keys = append(keys, v.Key())
		}
	}
	assert.Len(t, keys, callers-1, "each vote added once")
	var txs int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(DISTINCT xmin::text) FROM topgg.votes WHERE voter <> $1",
		vote(0, base).PlatformID).Scan(&txs))
	assert.Equal(t, 1, txs, "the waiting Ingests committed in one transaction")
}

// TestIngestCancelledWhileQueuedIsNotWritten: an Ingest whose context ends
// while it waits for the batch in flight returns the context's error and
// leaves the queue: its vote is not written later behind its caller's back.
func TestIngestCancelledWhileQueuedIsNotWritten(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	release := holdVoterLock(t, pool, s, vote(0, base).PlatformID)
	var wg sync.WaitGroup
	wg.Go(func() {
		_, err := s.Ingest(ctx, nil, []voterewards.Vote{vote(0, base)}, voterewards.DefaultStreakGrace)
		assert.NoError(t, err)
	})
	requireLockWaiter(t, pool)
	qctx, cancel := context.WithCancel(ctx)
	queued := make(chan error, 1)
	go func() {
		_, err := s.Ingest(qctx, nil, []voterewards.Vote{vote(1, base)}, voterewards.DefaultStreakGrace)
		queued <- err
	}()
	require.Eventually(t, func() bool { return pgstore.Queued(s) == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, testkit.Recv(t, queued, "the cancelled Ingest did not return"), context.Canceled)
	require.Zero(t, pgstore.Queued(s), "the cancelled request left the queue")
	release()
	wg.Wait()
	// A later batch does not carry the cancelled vote along.
	_, err := s.Ingest(ctx, nil, []voterewards.Vote{vote(2, base)}, voterewards.DefaultStreakGrace)
	require.NoError(t, err)
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM topgg.votes WHERE voter = $1", vote(1, base).PlatformID).Scan(&n))
	assert.Zero(t, n, "the cancelled vote was written")
}

// TestRewardRaceAcrossProcesses: two processes (an old leader and a new
// one) deliver the same votes at once: each vote's handler commits its
// write once (the bot's table, without a unique key to save it, says so).
func TestRewardRaceAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	dbURL := pg.URL(t)
	pool := openPool(t, dbURL)
	_, err := pool.Exec(ctx, "CREATE TABLE credited (key text NOT NULL)")
	require.NoError(t, err)
	var procs []*pgstore.Store
	for range 2 {
		s, err := pgstore.Open(ctx, openPool(t, dbURL), pgstore.Config{})
		require.NoError(t, err)
		procs = append(procs, s)
	}
	var votes []voterewards.Vote
	for u := range 20 {
		votes = append(votes, vote(u, base))
	}
	ingest(t, procs[0], nil, votes...)
	var calls atomic.Int32
	var wg sync.WaitGroup
	for _, s := range procs {
		reward := s.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			calls.Add(1)
			_, err := tx.Exec(ctx, "INSERT INTO credited SELECT $1 FROM pg_sleep(0.002)", v.Key()) // widen the race
			return err
		})
		wg.Go(func() {
			for _, v := range votes {
				assert.NoError(t, reward(ctx, v))
			}
		})
	}
	wg.Wait()
	var rows, keys int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT key) FROM credited").Scan(&rows, &keys))
	assert.Equal(t, len(votes), keys, "every vote credited")
	assert.Equal(t, len(votes), rows, "none twice")
	assert.Equal(t, int32(len(votes)), calls.Load(), "the loser of a race waits for the winner's commit and skips")
}

// TestPollerRewardsInItsTransaction runs the package example's flow on a
// real server: votes from the history reach the Poller, each is credited
// once in the reward's transaction and recorded as delivered, and the
// ledger and the board know them.
func TestPollerRewardsInItsTransaction(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	store := rewardStore(t, pool, pgstore.Config{})
	srv, client := fakeTopgg(t)
	const users = 5
	addHistory(srv, users, func(u int) int { return 1 + u%2 })
	callsCh := make(chan struct{}, 64) // handler calls, from the Poller's workers
	p, err := voterewards.New(client, voterewards.Config{
		Store: store,
		OnReward: store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			callsCh <- struct{}{}
			return credit(new(int))(ctx, tx, v)
		}),
	})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	require.Eventually(t, func() bool {
		snap, err := store.Load(ctx)
		return err == nil && len(snap.Seen) == users && len(snap.Pending) == 0
	}, 20*time.Second, 20*time.Millisecond, "every vote delivered and recorded")
	cancel()
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)
	assert.Len(t, callsCh, users, "one reward per vote")
	for u := range users {
		assert.Equal(t, 1+u%2, points(t, pool, fmt.Sprintf("3%017d", u)), "user %d credited once", u)
	}
	board, err := store.Leaderboard(ctx, time.Time{}, 10)
	require.NoError(t, err)
	require.Len(t, board, users)
	assert.Equal(t, 2, board[0].Total)
}

// TestPollerDeliversAgainAfterTheDatabaseRestarts: PostgreSQL is killed
// with a transactional reward in flight and stays down for longer than the
// handler's retries last (Concurrency 8, RetryDelay 20 ms, MaxAttempts 5).
// Restarted, the same Run rewards that vote, once: the attempts that met the
// dead connections were the store's failures, not the handler's, and the
// vote was not parked until the next Run.
func TestPollerDeliversAgainAfterTheDatabaseRestarts(t *testing.T) {
	ctx := context.Background()
	srv := pgstoretest.Start(t) // its own server: this test kills it
	pool := srv.Pool(t)
	store := rewardStore(t, pool, pgstore.Config{})
	tg, client := fakeTopgg(t)
	const users = 10
	addHistory(tg, users, func(int) int { return 1 })
	inFlight, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p, err := voterewards.New(client, voterewards.Config{
		Store: store, Concurrency: 8, RetryDelay: 20 * time.Millisecond, MaxAttempts: 5, Interval: 50 * time.Millisecond,
		OnReward: store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
			once.Do(func() { close(inFlight); <-release }) // the first reward is in flight at the kill
			return credit(new(int))(ctx, tx, v)
		}),
	})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Error("Run did not return")
		}
	})
	select {
	case <-inFlight:
	case <-time.After(20 * time.Second):
		t.Fatal("no reward started")
	}
	srv.Kill(t)
	close(release)
	// Down for longer than the handler's five attempts: the poll fails on the
	// store meanwhile, request after request.
	n := len(tg.Requests())
	require.Eventually(t, func() bool { return len(tg.Requests()) >= n+10 }, 20*time.Second, 10*time.Millisecond, "polling stopped")
	srv.Restart(t)
	require.Eventually(t, func() bool {
		snap, err := store.Load(ctx)
		return err == nil && len(snap.Seen) == users && len(snap.Pending) == 0
	}, 30*time.Second, 20*time.Millisecond, "a vote whose reward met the restart was not delivered again in this Run")
	for u := range users {
		assert.Equal(t, 1, points(t, pool, fmt.Sprintf("3%017d", u)), "user %d credited more or less than once", u)
	}
}

// TestHistoryReplayOfAPrunedVoteIsNotRewardedAgain: a transactional reward
// for an expired vote (a long lookback), pruned from the dedup set; the
// service then sends the vote again. PostgreSQL would have made it a new
// row, rewarded again in its own transaction: it is recognised as the
// pruned vote, so the bot's points and the ledger count it once.
func TestHistoryReplayOfAPrunedVoteIsNotRewardedAgain(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	store := rewardStore(t, pool, pgstore.Config{Retention: time.Hour})
	tg, client := fakeTopgg(t)
	now := time.Now().UTC().Truncate(time.Second)
	old := topggtest.Vote{UserID: "800000000000000001", PlatformID: "300000000000000001", Weight: 1,
		CreatedAt: now.Add(-13 * time.Hour), ExpiresAt: now.Add(-time.Hour)}
	tg.AddVote(old, topggtest.Vote{UserID: "800000000000000002", PlatformID: "300000000000000002", Weight: 1,
		CreatedAt: now.Add(-10 * time.Minute)})
	p, err := voterewards.New(client, voterewards.Config{Store: store, Lookback: 24 * time.Hour, Interval: 20 * time.Millisecond,
		OnReward: store.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error { return credit(new(int))(ctx, tx, v) })})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })
	require.Eventually(t, func() bool {
		snap, err := store.Load(ctx)
		return err == nil && len(snap.Seen) == 1 && len(snap.Pending) == 0 // both rewarded, the old one pruned
	}, 20*time.Second, 10*time.Millisecond)

	body := fmt.Sprintf(`{"data":[{"user_id":%q,"platform_id":%q,"weight":1,"created_at":%q,"expires_at":%q}]}`,
		old.UserID, old.PlatformID, old.CreatedAt.Format(time.RFC3339Nano), old.ExpiresAt.Format(time.RFC3339Nano))
	require.NoError(t, tg.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", Status: 200, Times: 3, Body: body}))
	require.Eventually(t, func() bool { return tg.PendingFaults() == 0 }, 20*time.Second, 10*time.Millisecond, "the replays were not read")
	n := len(tg.Requests())
	require.Eventually(t, func() bool { return len(tg.Requests()) > n }, 20*time.Second, 10*time.Millisecond, "polling stopped")
	st, err := store.Stats(ctx, old.PlatformID)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Votes, "the replayed vote was counted again")
	snap, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Pending, "the replayed vote was stored again")
	assert.Equal(t, 1, points(t, pool, old.PlatformID), "the replayed vote was rewarded again in its transaction")
}

// TestIngestFromCachedLedger: a process writes a voter's next vote from the
// ledger it wrote last, with no read; when another process wrote the voter
// since, or the vote may be one already stored, the database refuses that
// write and the vote is written from a fresh read: the ledger stays exact.
func TestIngestFromCachedLedger(t *testing.T) {
	ctx := context.Background()
	a, pool := openPooled(t)
	b, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	at := func(i int) voterewards.Vote { return vote(1, base.Add(time.Duration(i)*voterewards.VoteLifetime)) }
	require.Len(t, ingest(t, a, nil, at(0)), 1)
	require.Len(t, ingest(t, a, nil, at(1)), 1)
	assert.Zero(t, pgstore.LedgerReads(a), "a new voter, then one a wrote: no read")

	got := ingest(t, b, nil, at(2)) // b guessed a new voter: refused, read
	require.Len(t, got, 1)
	assert.Equal(t, 3, got[0].Stats.Votes)
	assert.Equal(t, int64(1), pgstore.LedgerReads(b))

	got = ingest(t, a, nil, at(3)) // a's ledger is one vote behind: refused, read
	require.Len(t, got, 1)
	assert.Equal(t, 4, got[0].Stats.Votes)
	assert.Equal(t, 4, got[0].Stats.Streak)
	assert.Equal(t, int64(1), pgstore.LedgerReads(a))

	late := at(3)
	late.CreatedAt = late.CreatedAt.Add(-time.Hour) // within the dedup window of one stored
	assert.Empty(t, ingest(t, a, nil, late), "a duplicate is not added")
	assert.Empty(t, ingest(t, b, nil, at(1)), "nor is one b's ledger cannot tell stored")
	got = ingest(t, a, nil, at(4))
	require.Len(t, got, 1)
	assert.Equal(t, 5, got[0].Stats.Votes)
	st, err := b.Stats(ctx, at(0).PlatformID)
	require.NoError(t, err)
	assert.Equal(t, got[0].Stats, st, "the ledger Ingest returned is the stored one")
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM topgg.votes").Scan(&n))
	assert.Equal(t, 5, n)
}

// TestGroupCommitIsBounded: of the Ingests queued while a batch commits, the
// next transaction takes at most MaxBatch; the rest commit after it.
func TestGroupCommitIsBounded(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	release := holdVoterLock(t, pool, s, vote(0, base).PlatformID)
	const queued = pgstore.MaxBatch + 10
	var wg sync.WaitGroup
	for i := range queued + 1 {
		wg.Go(func() {
			_, err := s.Ingest(ctx, nil, []voterewards.Vote{vote(i, base)}, voterewards.DefaultStreakGrace)
			assert.NoError(t, err)
		})
		if i == 0 {
			requireLockWaiter(t, pool)
		}
	}
	require.Eventually(t, func() bool { return pgstore.Queued(s) == queued }, 10*time.Second, time.Millisecond)
	release()
	wg.Wait()
	rows, _ := pool.Query(ctx, "SELECT count(*) FROM topgg.votes WHERE voter <> $1 GROUP BY xmin::text ORDER BY 1 DESC", vote(0, base).PlatformID)
	sizes, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	assert.Equal(t, []int{pgstore.MaxBatch, queued - pgstore.MaxBatch}, sizes)
}

// TestIngestWaitsForALockAtMostTxTimeout: an Ingest whose voter is locked
// by another transaction fails with PostgreSQL's lock timeout (55P03) after
// TxTimeout: the limit is set before the lock is waited for.
func TestIngestWaitsForALockAtMostTxTimeout(t *testing.T) {
	pool := pg.Pool(t)
	s, err := pgstore.Open(t.Context(), pool, pgstore.Config{TxTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	v := vote(1, base)
	holdVoterLock(t, pool, s, v.PlatformID)
	_, err = s.Ingest(t.Context(), nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
	pe, ok := errors.AsType[*pgconn.PgError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "55P03", pe.Code, "lock_not_available")
}

// TestFailedBatchIsBounded: a batch that fails (its voter's lock held past
// TxTimeout) is retried request by request, but its Ingests, even one whose
// ctx ended, return within a few TxTimeouts, not one per request.
func TestFailedBatchIsBounded(t *testing.T) {
	ctx := context.Background()
	pool := pg.Pool(t)
	const txTimeout = 200 * time.Millisecond
	s, err := pgstore.Open(ctx, pool, pgstore.Config{TxTimeout: txTimeout})
	require.NoError(t, err)
	holdVoterLock(t, pool, s, vote(0, base).PlatformID)
	first := make(chan error, 1)
	go func() {
		_, err := s.Ingest(ctx, nil, []voterewards.Vote{vote(0, base)}, voterewards.DefaultStreakGrace)
		first <- err
	}()
	requireLockWaiter(t, pool)
	const queued = 30
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan time.Time, queued)
	for i := range queued {
		go func() {
			c := ctx
			if i == 0 {
				c = cctx
			}
			_, _ = s.Ingest(c, nil, []voterewards.Vote{vote(0, base.Add(time.Duration(i+1)*voterewards.VoteLifetime))}, voterewards.DefaultStreakGrace)
			done <- time.Now()
		}()
	}
	require.Eventually(t, func() bool { return pgstore.Queued(s) == queued }, 10*time.Second, time.Millisecond)
	require.Error(t, testkit.Recv(t, first, "the first batch did not fail"))
	require.Eventually(t, func() bool { return pgstore.Queued(s) == 0 }, 10*time.Second, time.Millisecond, "taken by the next batch")
	cancel()
	cancelled := time.Now()
	var last time.Time
	for range queued {
		last = testkit.Recv(t, done, "an Ingest did not return")
	}
	t.Logf("the batch's Ingests returned %s after its ctx ended (TxTimeout %s)", last.Sub(cancelled), txTimeout)
	// 4 TxTimeouts, and slack for a loaded machine; with a bound per retry,
	// each of the 30 retries would wait out its lock_timeout: 6 s.
	assert.Less(t, last.Sub(cancelled), 15*txTimeout, "the batch and its retries bounded together")
}

// holdVoterLock holds voter's Ingest lock in a transaction of pool's until
// release (or the test's end), so that an Ingest of that voter waits.
func holdVoterLock(t *testing.T, pool *pgxpool.Pool, s *pgstore.Store, voter string) (release func()) {
	t.Helper()
	holder, err := pool.Begin(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { _ = holder.Rollback(context.Background()) })
	_, err = holder.Exec(t.Context(), "SELECT pg_advisory_xact_lock($1)", pgstore.LockKey(s, voter))
	require.NoError(t, err)
	return func() { require.NoError(t, holder.Rollback(t.Context())) }
}

// requireLockWaiter waits until one transaction of pool's database waits for
// an Ingest lock: the Ingest that took the group commit's turn.
func requireLockWaiter(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	require.Eventually(t, func() bool {
		var waiting int
		return pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&waiting) == nil && waiting == 1
	}, testkit.Wait, time.Millisecond, "an Ingest waits for the lock")
}

// TestMonthBoardReadsItsIndexes: a month's board reads n entries of each
// board index (the newest months' in voters, the older in voter_past_months), not
// every row of the month and a sort, however many voters the month has.
func TestMonthBoardReadsItsIndexes(t *testing.T) {
	s, pool := openPooled(t)
	ctx := context.Background()
	month := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for _, q := range []string{"INSERT INTO topgg.voters SELECT 'a' || g, g, g, 1, 1, NULL, $1::bigint, g, g, $1::bigint + g FROM generate_series(1, 20000) g",
		"INSERT INTO topgg.voter_past_months SELECT $1::bigint, 'b' || g, g, g, $1::bigint + g FROM generate_series(1, 20000) g"} {
		_, err := pool.Exec(ctx, q, month)
		require.NoError(t, err)
	}
	_, err := pool.Exec(ctx, "ANALYZE")
	require.NoError(t, err)
	rows, _ := pool.Query(ctx, "EXPLAIN "+pgstore.MonthBoardQuery(s), month, 10)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")
	assert.NotContains(t, plan, "Seq Scan", plan)
	assert.NotContains(t, plan, "Sort  ", plan)
	board, err := s.Leaderboard(ctx, time.Unix(0, month), 3)
	require.NoError(t, err)
	assert.Equal(t, []voterewards.Standing{
		{UserID: "a20000", Votes: 20000, Total: 20000, ReachedAt: time.Unix(0, month+20000).UTC()},
		{UserID: "b20000", Votes: 20000, Total: 20000, ReachedAt: time.Unix(0, month+20000).UTC()},
		{UserID: "a19999", Votes: 19999, Total: 19999, ReachedAt: time.Unix(0, month+19999).UTC()},
	}, board)
}
