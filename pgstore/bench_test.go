package pgstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/voterewards"
)

// benchVoters is how many voters the ingest and delivery benchmarks cycle
// through (each voter's next vote a VoteLifetime later, so none is a
// duplicate).
const benchVoters = 1000

// benchVote is the i-th vote of the benchmarks.
func benchVote(i int) voterewards.Vote {
	return vote(i%benchVoters, base.Add(time.Duration(i/benchVoters)*voterewards.VoteLifetime))
}

// floor is the benchmarks' floor: what a careful hand-written store does per
// vote, one statement in a transaction of its own (one round trip, one commit
// with fsync) that inserts the vote unless its key is there and, only if it
// did, adds its weight to the voter's points row (an upsert).
type floor struct{ pool *pgxpool.Pool }

func newFloor(b *testing.B, pool *pgxpool.Pool) floor {
	b.Helper()
	ctx := context.Background()
	_, err := pool.Exec(ctx, `CREATE TABLE floor_votes (key text PRIMARY KEY);
		CREATE TABLE floor_points (voter text PRIMARY KEY, points int NOT NULL)`)
	require.NoError(b, err)
	_, err = pool.Exec(ctx, "INSERT INTO floor_points SELECT '3' || lpad(g::text, 17, '0'), 0 FROM generate_series(0, $1) g", benchVoters)
	require.NoError(b, err)
	return floor{pool}
}

func (f floor) add(ctx context.Context, v voterewards.Vote) error {
	_, err := f.pool.Exec(ctx, `WITH v AS (INSERT INTO floor_votes VALUES ($1) ON CONFLICT DO NOTHING RETURNING key)
		INSERT INTO floor_points (voter, points) SELECT $2, $3 FROM v
		ON CONFLICT (voter) DO UPDATE SET points = floor_points.points + EXCLUDED.points`, v.Key(), v.PlatformID, v.Weight)
	return err
}

// beside runs step on each of the benchmark's b.N votes (benchVote(i)),
// each followed by the floor's insert of the same vote, and reports both
// sides with reportVsFloor.
func (f floor) beside(b *testing.B, step func(context.Context, voterewards.Vote) error) {
	ctx := context.Background()
	var inStore, inFloor time.Duration
	b.ResetTimer()
	for i := range b.N {
		v := benchVote(i)
		t0 := time.Now()
		if err := step(ctx, v); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := f.add(ctx, v); err != nil {
			b.Fatal(err)
		}
		inStore, inFloor = inStore+t1.Sub(t0), inFloor+time.Since(t1)
	}
	reportVsFloor(b, b.N, inStore, inFloor)
}

// reportVsFloor reports the store's and the floor's votes/s and their ratio.
func reportVsFloor(b *testing.B, n int, store, fl time.Duration) {
	b.ReportMetric(float64(n)/store.Seconds(), "votes/s")
	b.ReportMetric(float64(n)/fl.Seconds(), "floor-votes/s")
	b.ReportMetric(store.Seconds()/fl.Seconds(), "x-floor")
}

// BenchmarkIngest: one vote per Ingest (as a webhook gives them), beside the
// floor, interleaved in the same run.
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	pool := pg.Pool(b)
	s, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(b, err)
	newFloor(b, pool).beside(b, func(ctx context.Context, v voterewards.Vote) error {
		_, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
		return err
	})
}

// BenchmarkIngestConcurrent: one vote per Ingest from 1 and 8 concurrent
// callers (a webhook server's requests), beside the floor with as many
// callers, in rounds of 256 votes a side, the side that goes first
// alternating. It reports each side's votes/s and allocations per vote.
func BenchmarkIngestConcurrent(b *testing.B) {
	for _, callers := range []int{1, 8} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			ctx := context.Background()
			pool := openPool(b, pg.URL(b)+"&pool_max_conns=16")
			s, err := pgstore.Open(ctx, pool, pgstore.Config{})
			require.NoError(b, err)
			fl := newFloor(b, pool)
			sides := [2]func(context.Context, voterewards.Vote) error{
				func(ctx context.Context, v voterewards.Vote) error {
					_, err := s.Ingest(ctx, nil, []voterewards.Vote{v}, voterewards.DefaultStreakGrace)
					return err
				},
				fl.add,
			}
			const round = 256
			var took, cpu [2]time.Duration
			var allocs [2]uint64
			b.ResetTimer()
			for start := 0; start < b.N; start += round {
				for k := range 2 {
					side := (k + start/round) % 2
					c0 := cpuTime(b, pool)
					d, a := ingestRound(b, sides[side], callers, start, min(round, b.N-start))
					took[side], allocs[side], cpu[side] = took[side]+d, allocs[side]+a, cpu[side]+cpuSince(b, pool, c0)
				}
			}
			reportVsFloor(b, b.N, took[0], took[1])
			b.ReportMetric(float64(took[1])/float64(took[0]), "throughput-x-floor")
			b.ReportMetric(float64(allocs[0])/float64(b.N), "allocs/vote")
			b.ReportMetric(float64(allocs[1])/float64(b.N), "floor-allocs/vote")
			b.ReportMetric(float64(cpu[0].Microseconds())/float64(b.N), "cpu-us/vote")
			b.ReportMetric(float64(cpu[1].Microseconds())/float64(b.N), "floor-cpu-us/vote")
			b.ReportMetric(cpu[0].Seconds()/cpu[1].Seconds(), "cpu-x-floor")
		})
	}
}

// ingestRound adds votes start..start+n-1 with add from callers goroutines,
// returning the time it took and the allocations made meanwhile.
func ingestRound(b *testing.B, add func(context.Context, voterewards.Vote) error, callers, start, n int) (time.Duration, uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.Mallocs
	var next atomic.Int64
	var wg sync.WaitGroup
	t0 := time.Now()
	for range callers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := add(context.Background(), benchVote(start+i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(t0)
	runtime.ReadMemStats(&ms)
	return d, ms.Mallocs - before
}

// cpuTime returns the CPU time used so far by this process (Go side) and by
// each process of pool's PostgreSQL server (pid 0: this process's), which the
// other jobs on a loaded machine move much less than the wall time.
func cpuTime(b *testing.B, pool *pgxpool.Pool) map[int]time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	out := map[int]time.Duration{0: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	rows, _ := pool.Query(context.Background(), "SELECT pid FROM pg_stat_activity")
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(b, err)
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // exited
		}
		// utime and stime are fields 14 and 15, in clock ticks (100 a second).
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[int(pid)] = time.Duration(ut+st) * 10 * time.Millisecond
	}
	return out
}

// cpuSince returns the CPU time used by this process and pool's server since c0.
func cpuSince(b *testing.B, pool *pgxpool.Pool, c0 map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, c := range cpuTime(b, pool) {
		d += c - c0[pid]
	}
	return d
}

// BenchmarkDelivery: the reward of one vote in its transaction (crediting a
// points row) and the Poller's Delivered after it, beside the floor.
func BenchmarkDelivery(b *testing.B) {
	ctx := context.Background()
	pool := pg.Pool(b)
	s, err := pgstore.Open(ctx, pool, pgstore.Config{})
	require.NoError(b, err)
	fl := newFloor(b, pool)
	_, err = pool.Exec(ctx, `CREATE TABLE points (voter text PRIMARY KEY, points int NOT NULL);
		INSERT INTO points SELECT voter, 0 FROM floor_points`)
	require.NoError(b, err)
	reward := s.Reward(func(ctx context.Context, tx pgx.Tx, v voterewards.Vote) error {
		_, err := tx.Exec(ctx, "UPDATE points SET points = points + $2 WHERE voter = $1", v.PlatformID, v.Weight)
		return err
	})
	votes := make([]voterewards.Vote, b.N)
	for i := range votes {
		votes[i] = benchVote(i)
	}
	for i := 0; i < len(votes); i += 1000 {
		_, err := s.Ingest(ctx, nil, votes[i:min(i+1000, len(votes))], voterewards.DefaultStreakGrace)
		require.NoError(b, err)
	}
	fl.beside(b, func(ctx context.Context, v voterewards.Vote) error {
		if err := reward(ctx, v); err != nil {
			return err
		}
		return s.Delivered(ctx, v, false)
	})
}

// BenchmarkLedger reads the ledger of 100,000 voters: the all-time and the
// month's top 10, and one voter's Stats.
func BenchmarkLedger(b *testing.B) {
	ctx := context.Background()
	s := open(b, pgstore.Config{})
	const voters, chunk = 100_000, 2000
	for i := 0; i < voters; i += chunk {
		votes := make([]voterewards.Vote, 0, chunk)
		for u := i; u < i+chunk; u++ {
			v := vote(u, base.Add(time.Duration(u)*time.Millisecond))
			v.Weight = 1 + u%7
			votes = append(votes, v)
		}
		_, err := s.Ingest(ctx, nil, votes, voterewards.DefaultStreakGrace)
		require.NoError(b, err)
	}
	b.Run("Leaderboard/all-time", func(b *testing.B) {
		for b.Loop() {
			board, err := s.Leaderboard(ctx, time.Time{}, 10)
			if err != nil || len(board) != 10 {
				b.Fatal(err, len(board))
			}
		}
	})
	b.Run("Leaderboard/month", func(b *testing.B) {
		for b.Loop() {
			board, err := s.Leaderboard(ctx, base, 10)
			if err != nil || len(board) != 10 {
				b.Fatal(err, len(board))
			}
		}
	})
	b.Run("Stats", func(b *testing.B) {
		i := 0
		for b.Loop() {
			st, err := s.Stats(ctx, fmt.Sprintf("3%017d", i%voters))
			if err != nil || st.Votes != 1 {
				b.Fatal(err, st)
			}
			i += 7919
		}
	})
}

// BenchmarkFeedLatency: from the return of one process's Ingest to the vote
// reaching another process's Follow (two pools).
func BenchmarkFeedLatency(b *testing.B) {
	ctx := context.Background()
	dbURL := pg.URL(b)
	writer, err := pgstore.Open(ctx, openPool(b, dbURL), pgstore.Config{})
	require.NoError(b, err)
	reader, err := pgstore.Open(ctx, openPool(b, dbURL), pgstore.Config{})
	require.NoError(b, err)
	got, ready := make(chan time.Time, 1), make(chan struct{}, 1)
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- reader.Follow(fctx, func(voterewards.Vote) { got <- time.Now() }, func() { ready <- struct{}{} })
	}()
	defer func() { cancel(); <-done }()
	<-ready
	var lat, worst time.Duration
	i := 0
	for b.Loop() {
		if _, err := writer.Ingest(ctx, nil, []voterewards.Vote{benchVote(i)}, voterewards.DefaultStreakGrace); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		select {
		case at := <-got:
			d := at.Sub(committed)
			lat, worst = lat+d, max(worst, d)
		case <-time.After(10 * time.Second):
			b.Fatal("the vote did not reach the other process")
		}
		i++
	}
	b.ReportMetric(float64(lat.Microseconds())/float64(i)/1000, "ms-latency")
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst")
}
