package pgstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/voterewards"
)

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

// TestConcurrentIngestsShareOneCommit: Ingests that arrive while another
// commits are written together, in one transaction, each caller given its
// own votes; a vote two of them bring is added once.
func TestConcurrentIngestsShareOneCommit(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	// Hold voter 0's lock: its Ingest takes the turn and waits on it.
	holder, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback(ctx) }()
	_, err = holder.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", pgstore.LockKey(s, vote(0, base).PlatformID))
	require.NoError(t, err)
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
			require.Eventually(t, func() bool {
				var waiting int
				return pool.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&waiting) == nil && waiting == 1
			}, 10*time.Second, time.Millisecond, "the first Ingest took the turn and waits for the lock")
		}
	}
	require.Eventually(t, func() bool { return pgstore.Queued(s) == callers-1 }, 10*time.Second, time.Millisecond, "the others wait")
	require.NoError(t, holder.Rollback(ctx))
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
