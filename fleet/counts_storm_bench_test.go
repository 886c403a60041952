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
	srv := redistest.Start(b)
	evals := &evalCounter{}
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
		wg.Go(func() { _ = rep.Run(ctx) })
	}
	leader, err := newShardCounts(newClient(b, srv.Addr()), "storm", processes*perProcess, countsConfig{})
	if err != nil {
		b.Fatal(err)
	}
	for { // every shard reported once
		if t, err := leader.Total(ctx); err == nil && len(t.Missing) == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}

	var mu sync.Mutex
	pending := make([][]pendingJoin, processes*perProcess)
	var lags []time.Duration
	readerDone := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			t, err := leader.Total(ctx)
			now := time.Now()
			if err == nil {
				mu.Lock()
				for s, q := range pending {
					n := 0
					for n < len(q) && q[n].count <= t.PerShard[s] {
						lags = append(lags, now.Sub(q[n].at))
						n++
					}
					pending[s] = q[n:]
				}
				left := slices.ContainsFunc(pending, func(q []pendingJoin) bool { return len(q) > 0 })
				mu.Unlock()
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
	}()

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
		mu.Lock()
		c := p.guilds[k].Add(1)
		pending[p.first+k] = append(pending[p.first+k], pendingJoin{count: int(c), at: time.Now()})
		mu.Unlock()
		p.sig.fire()
	}
	elapsed := time.Since(start)
	close(stop)
	select {
	case <-readerDone:
	case <-time.After(10 * time.Second):
		b.Fatal("the leader's total never showed every join")
	}
	publishes := evals.n.Load() - before
	slices.Sort(lags)
	q := func(f float64) float64 { return float64(lags[int(f*float64(len(lags)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(float64(i)/elapsed.Seconds(), "joins/s")
	b.ReportMetric(float64(publishes)/elapsed.Seconds(), "publishes/s")
	b.ReportMetric(q(0.5), "lag-p50-ms")
	b.ReportMetric(q(0.99), "lag-p99-ms")
	b.ReportMetric(q(1), "lag-max-ms")
}
