package fleet

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// stormProcess is one simulated process of the join storm: its own Redis
// client and reporter (the real one), its shards' guild counts, and the
// change signal a Counter would give it.
type stormProcess struct {
	first  int // its shards are first .. first+len(guilds)-1
	guilds []atomic.Int64
	sig    signal
}

func (p *stormProcess) shards() []shardReport {
	out := make([]shardReport, len(p.guilds))
	for i := range p.guilds {
		out[i] = shardReport{Shard: p.first + i, Guilds: int(p.guilds[i].Load())}
	}
	return out
}

// pendingJoin is a join the leader's total does not show yet: its shard's
// count after it, and when it happened.
type pendingJoin struct {
	count int
	at    time.Time
}

// stormLags tracks the joins the leader's total does not show yet, per
// shard, and the lags of those it has shown.
type stormLags struct {
	mu      sync.Mutex
	pending [][]pendingJoin
	lags    []time.Duration
}

func (l *stormLags) join(shard, count int, at time.Time) {
	l.mu.Lock()
	l.pending[shard] = append(l.pending[shard], pendingJoin{count: count, at: at})
	l.mu.Unlock()
}

// observe takes the joins a total read at now shows, and reports whether
// some are still not shown.
func (l *stormLags) observe(t fleetTotal, now time.Time) (left bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for s, q := range l.pending {
		n := 0
		for n < len(q) && q[n].count <= t.PerShard[s] {
			l.lags = append(l.lags, now.Sub(q[n].at))
			n++
		}
		l.pending[s] = q[n:]
		left = left || n < len(q)
	}
	return left
}

// follow reads the leader's total every 5 ms until stop is closed and
// every join is shown, then closes done.
func (l *stormLags) follow(ctx context.Context, leader *shardCounts, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		t, err := leader.total(ctx)
		if err == nil {
			left := l.observe(t, time.Now())
			select {
			case <-stop:
				if !left {
					return
				}
			default:
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// quantile returns the q-quantile of the sorted lags in milliseconds.
func (l *stormLags) quantile(q float64) float64 {
	return float64(l.lags[int(q*float64(len(l.lags)-1))]) / float64(time.Millisecond)
}

// startStorm starts the simulated processes' reporters until the benchmark
// ends, each on its own client counted by evals, and returns them with the
// leader's view of the counts, once every shard has reported.
func startStorm(b *testing.B, processes, perProcess int, evals *evalCounter) ([]*stormProcess, *shardCounts) {
	srv := redistest.Start(b)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(func() { cancel(); wg.Wait() })
	procs := make([]*stormProcess, processes)
	for i := range procs {
		p := &stormProcess{first: i * perProcess, guilds: make([]atomic.Int64, perProcess)}
		procs[i] = p
		rdb := newClient(b, srv.Addr())
		rdb.AddHook(evals)
		counts, err := newShardCounts(rdb, "storm", processes*perProcess, countsConfig{})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := newReporter(counts, p.shards, reporterConfig{Every: 15 * time.Second, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		rep.changed = p.sig.changed
		wg.Go(func() { _ = rep.run(ctx) })
	}
	leader, err := newShardCounts(newClient(b, srv.Addr()), "storm", processes*perProcess, countsConfig{})
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if t, err := leader.total(ctx); err == nil && len(t.Missing) == 0 {
			return procs, leader
		}
		if time.Now().After(deadline) {
			b.Fatal("the processes never reported")
		}
	}
}

// BenchmarkJoinStorm is 1,000 guild joins a second across 50 processes of
// 10 shards each (simulated processes in this test process: each has its own
// client and runs the real reporter, woken by a change signal as
// autopost.Counter.Changed wakes it). One op is one join; run it with
// -benchtime=3000x for a 3 s storm. It reports the publishes (Redis round
// trips, one EVAL each) per second of all processes, and the lag from a join
// to the first leader read of the total that shows it (the leader reads every
// 5 ms, as fast as a Poster could ask): p50, p99 and max.
func BenchmarkJoinStorm(b *testing.B) {
	const processes, perProcess = 50, 10
	evals := &evalCounter{}
	procs, leader := startStorm(b, processes, perProcess, evals)
	lags := &stormLags{pending: make([][]pendingJoin, processes*perProcess)}
	stop, done := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go lags.follow(ctx, leader, stop, done)

	rng := rand.New(rand.NewPCG(1, 2))
	before := evals.n.Load()
	start := time.Now()
	i := 0
	for b.Loop() {
		if d := time.Until(start.Add(time.Duration(i) * time.Millisecond)); d > 0 {
			time.Sleep(d)
		}
		i++
		p := procs[rng.IntN(processes)]
		k := rng.IntN(perProcess)
		lags.join(p.first+k, int(p.guilds[k].Add(1)), time.Now())
		p.sig.fire()
	}
	elapsed := time.Since(start)
	close(stop)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		b.Fatal("the leader's total never showed every join")
	}
	publishes := evals.n.Load() - before
	slices.Sort(lags.lags)
	b.ReportMetric(float64(i)/elapsed.Seconds(), "joins/s")
	b.ReportMetric(float64(publishes)/elapsed.Seconds(), "publishes/s")
	b.ReportMetric(lags.quantile(0.5), "lag-p50-ms")
	b.ReportMetric(lags.quantile(0.99), "lag-p99-ms")
	b.ReportMetric(lags.quantile(1), "lag-max-ms")
}
