package voterewards

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg"
)

// WithClock returns cfg with its clock set to c: how the tests of this
// package inject a *clock.Fake.
func WithClock(cfg Config, c clock.Clock) Config {
	cfg.clock = c
	return cfg
}

// Bounds of sanitize and of Run's stop, for the tests.
const (
	MaxClockSkew = maxClockSkew
	MaxWeight    = maxWeight
	CancelWait   = cancelWait
)

// MemoryStore is NewMemoryStore's type, for the tests that wrap it.
type MemoryStore = memoryStore

// NewMemory returns NewMemoryStore's store as its type.
func NewMemory() *MemoryStore { return NewMemoryStore().(*memoryStore) }

// IdleSource never answers; benchmarks feed pages to ingest themselves.
type IdleSource struct{}

func (IdleSource) Votes(ctx context.Context, _ topgg.VotesQuery) (*topgg.VotePage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// Run is a poller's run, for the benchmarks that play its fetch loop.
type Run = run

// BenchPoller returns the run of a poller whose store is loaded and whose
// workers run, but without the fetch loop: the caller plays the fetch loop.
func BenchPoller(b *testing.B, store Store, clk clock.Clock, delivered *atomic.Int64, expire bool, obs ...func(Event)) (*Run, context.Context) {
	b.Helper()
	cfg := Config{
		Store: store, Concurrency: defaultConcurrency, clock: clk,
		OnReward: func(context.Context, Vote) error { delivered.Add(1); return nil },
	}
	if len(obs) > 0 {
		cfg.Observer = obs[0]
	}
	if expire {
		cfg.OnExpire = func(context.Context, Vote) error { return nil }
	}
	p, err := New(IdleSource{}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := p.newRun(ctx)
	snap, err := store.Load(ctx)
	if err != nil {
		b.Fatal(err)
	}
	r.prepare(snap)
	var loops sync.WaitGroup
	if expire {
		loops.Go(func() { r.expiryLoop(ctx) })
	}
	b.Cleanup(func() {
		cancel()
		r.drain(&loops)
	})
	return r, ctx
}

// Ingest ingests a fetched page, as the fetch loop does.
func (r *run) Ingest(ctx context.Context, page *topgg.VotePage) (int, error) {
	return r.ingest(ctx, page)
}

// MaybePrune prunes the dedup set and the cache when due, as the fetch loop does.
func (r *run) MaybePrune(ctx context.Context) { r.maybePrune(ctx) }

// AddActive puts votes in p's cache of active votes.
func AddActive(p *Poller, votes []Vote) { p.cache.add(votes) }
