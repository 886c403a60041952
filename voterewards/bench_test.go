package voterewards_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// openBench opens a boltstate.State in dir for a benchmark.
func openBench(b *testing.B, dir string) *boltstate.State {
	s, err := boltstate.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// ramDir returns a directory in memory (/dev/shm), where fsync costs
// nothing: the "-ram" variants measure bbolt without the disk's fsync (what
// the unexported noSync option measured when the store was voterewards').
func ramDir(b *testing.B) string {
	d, err := os.MkdirTemp("/dev/shm", "boltbench")
	if err != nil {
		b.Skip("no /dev/shm:", err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// benchPage returns page number n of a synthetic history: 100 votes a page,
// one every spacing from base, users cycling through users.
func benchPage(n int, base time.Time, spacing time.Duration, users int) *topgg.VotePage {
	page := &topgg.VotePage{Cursor: fmt.Sprintf("c%d", n), Votes: make([]topgg.Vote, 100)}
	for i := range page.Votes {
		k := n*100 + i
		created := base.Add(time.Duration(k) * spacing)
		u := k % users
		page.Votes[i] = topgg.Vote{
			UserID: fmt.Sprintf("7%017d", u), PlatformID: fmt.Sprintf("3%017d", u), Weight: 1 + k%2,
			CreatedAt: created, ExpiresAt: created.Add(voterewards.VoteLifetime),
		}
	}
	return page
}

func waitDelivered(delivered *atomic.Int64, n int64) {
	for delivered.Load() < n {
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkActive measures a cache lookup among 100k users with votes.
func BenchmarkActive(b *testing.B) {
	p, err := voterewards.New(voterewards.IdleSource{}, voterewards.Config{Store: voterewards.NewMemoryStore(),
		OnReward: func(context.Context, voterewards.Vote) error { return nil }})
	if err != nil {
		b.Fatal(err)
	}
	const users = 100_000
	now := time.Now()
	ids := make([]string, users)
	var votes []voterewards.Vote
	for u := range users {
		ids[u] = fmt.Sprintf("3%017d", u)
		votes = append(votes, voterewards.Vote{Vote: topgg.Vote{UserID: fmt.Sprintf("7%017d", u), PlatformID: ids[u],
			CreatedAt: now.UTC().Round(0), ExpiresAt: now.Add(time.Hour).UTC().Round(0)}, Origin: voterewards.OriginHistory})
	}
	voterewards.AddActive(p, votes)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if !p.Active(ids[i%users]).Active {
			b.Fatal("not active")
		}
		i++
	}
}

// BenchmarkIngest measures the path from a fetched page to a handled vote:
// dedup, store (one transaction a page, one a delivery batch), the per-user
// queues and a no-op handler; no HTTP. One op is one vote.
func BenchmarkIngest(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) voterewards.Store
	}{
		{"memory", func(*testing.B) voterewards.Store { return voterewards.NewMemoryStore() }},
		{"bolt", func(b *testing.B) voterewards.Store { return openBench(b, b.TempDir()) }},
		{"bolt-ram", func(b *testing.B) voterewards.Store { return openBench(b, ramDir(b)) }},
		// With an Observer that counts every event, as a metrics one does:
		// the cost of the hook when used.
		{"memory-observed", func(*testing.B) voterewards.Store { return voterewards.NewMemoryStore() }},
	}
	for _, s := range stores {
		b.Run(s.name, func(b *testing.B) {
			var delivered, observed atomic.Int64
			var obs []func(voterewards.Event)
			if strings.HasSuffix(s.name, "-observed") {
				obs = append(obs, func(voterewards.Event) { observed.Add(1) })
			}
			// One vote a second, 50k users: a user votes every 13.9 h, as
			// real users can (votes less than DedupWindow apart are one).
			base := time.Now().Add(-60 * 24 * time.Hour)
			r, ctx := voterewards.BenchPoller(b, s.open(b), clock.Real(), &delivered, false, obs...)
			pages := (b.N + 99) / 100
			b.ResetTimer()
			for n := range pages {
				if _, err := r.Ingest(ctx, benchPage(n, base, time.Second, 50_000)); err != nil {
					b.Fatal(err)
				}
			}
			waitDelivered(&delivered, int64(pages*100))
			b.StopTimer()
			b.ReportMetric(float64(pages*100)/b.Elapsed().Seconds(), "votes/s")
		})
	}
}

// BenchmarkEndToEnd measures 100k votes read from topggtest over HTTP (1,000
// pages) and handled by a no-op handler. Run it with -benchtime=1x.
func BenchmarkEndToEnd(b *testing.B) {
	for _, name := range []string{"memory", "bolt"} {
		b.Run(name, func(b *testing.B) {
			const total = 100_000
			for range b.N {
				b.StopTimer()
				srv, err := topggtest.NewServer()
				require.NoError(b, err)
				base := time.Now().Add(-11 * time.Hour)
				for n := range total / 100 {
					for _, v := range benchPage(n, base, 100*time.Millisecond, total).Votes {
						srv.AddVote(topggtest.Vote{UserID: v.UserID, PlatformID: v.PlatformID, Weight: v.Weight, CreatedAt: v.CreatedAt})
					}
				}
				client, err := srv.NewClient()
				if err != nil {
					b.Fatal(err)
				}
				var store voterewards.Store = voterewards.NewMemoryStore()
				if name == "bolt" {
					store = openBench(b, b.TempDir())
				}
				var delivered atomic.Int64
				p, err := voterewards.New(client, voterewards.Config{Store: store, Interval: 10 * time.Millisecond,
					OnReward: func(context.Context, voterewards.Vote) error { delivered.Add(1); return nil }})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				stop := make(chan error, 1)
				ctx, cancel := context.WithCancel(context.Background())
				go func() { stop <- p.Run(ctx) }()
				waitDelivered(&delivered, total)
				b.StopTimer()
				cancel()
				if err := <-stop; err != nil {
					b.Fatal(err)
				}
				srv.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(total*b.N)/b.Elapsed().Seconds(), "votes/s")
		})
	}
}

// BenchmarkResidentMemory feeds 1M votes (one every 864 ms of a simulated
// clock, so 50k votes are active at a time, as from 50k users voting every 12
// hours) through ingest, delivery and expiry, and reports the live heap after
// a GC at each quarter: flat once past the vote window. Run with -benchtime=1x.
func BenchmarkResidentMemory(b *testing.B) {
	for _, name := range []string{"memory", "bolt-ram"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				residentMemory(b, name)
			}
		})
	}
}

func residentMemory(b *testing.B, name string) {
	const total, spacing, users = 1_000_000, 864 * time.Millisecond, 50_000
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(base)
	var store voterewards.Store = voterewards.NewMemoryStore()
	var dir string
	if name == "bolt-ram" {
		dir = ramDir(b)
		store = openBench(b, dir)
	}
	var delivered atomic.Int64
	r, ctx := voterewards.BenchPoller(b, store, clk, &delivered, true)
	for n := range total / 100 {
		page := benchPage(n, base, spacing, users)
		clk.Set(page.Votes[99].CreatedAt)
		if _, err := r.Ingest(ctx, page); err != nil {
			b.Fatal(err)
		}
		r.MaybePrune(ctx)
		if done := (n + 1) * 100; done%(total/4) == 0 {
			waitDelivered(&delivered, int64(done))
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), fmt.Sprintf("heapMB@%dk", done/1000))
		}
	}
	if dir != "" {
		if fi, err := os.Stat(filepath.Join(dir, "voterewards.db")); err == nil { // boltstate.Open's file
			b.ReportMetric(float64(fi.Size())/(1<<20), "fileMB")
		}
	}
}

// BenchmarkIngestWebhooks measures Poller.Ingest as a webhook receiver calls
// it: one vote per call, many concurrent callers (64 per CPU), the bbolt store
// with fsync on, each call returning once its vote is durable. Concurrent
// calls share commits. "delivering" also runs delivery (a no-op handler),
// whose records share the same file. One op is one vote.
func BenchmarkIngestWebhooks(b *testing.B) {
	for _, deliver := range []bool{false, true} {
		name := "store-only"
		if deliver {
			name = "delivering"
		}
		b.Run(name, func(b *testing.B) {
			store := openBench(b, b.TempDir())
			var delivered atomic.Int64
			p, err := voterewards.New(voterewards.IdleSource{}, voterewards.Config{Store: store,
				OnReward: func(context.Context, voterewards.Vote) error { delivered.Add(1); return nil }})
			if err != nil {
				b.Fatal(err)
			}
			if deliver {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- p.Run(ctx) }()
				b.Cleanup(func() { cancel(); <-done })
			}
			var next atomic.Int64
			base := time.Now().Add(-time.Hour)
			b.SetParallelism(64)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n := next.Add(1)
					// A v1 vote.create carries expires_at; one without it
					// would be corrected and logged (a warning per vote).
					created := base.Add(time.Duration(n) * time.Microsecond)
					v := voterewards.Vote{Vote: topgg.Vote{UserID: fmt.Sprintf("7%017d", n), PlatformID: fmt.Sprintf("3%017d", n), Weight: 1,
						CreatedAt: created, ExpiresAt: created.Add(voterewards.VoteLifetime)}, Origin: voterewards.OriginWebhook}
					if err := p.Ingest(context.Background(), v); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "votes/s")
		})
	}
}
