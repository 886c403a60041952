package fleet

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testlog"
)

// TestMain turns the test binary into a helper process when asked (see
// childMain).
func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(childMain(role))
	}
	redistest.Main(m, "fleet")
}

// errPartitioned is what a partitioned client's commands fail with.
var errPartitioned = errors.New("test: partitioned from Redis")

// partition is a go-redis hook that fails every command while cut is set: a
// network partition between one process and Redis.
type partition struct{ cut atomic.Bool }

func (p *partition) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if p.cut.Load() {
			return nil, errPartitioned
		}
		return next(ctx, network, addr)
	}
}

func (p *partition) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if p.cut.Load() {
			cmd.SetErr(errPartitioned)
			return errPartitioned
		}
		return next(ctx, cmd)
	}
}

func (p *partition) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if p.cut.Load() {
			for _, c := range cmds {
				c.SetErr(errPartitioned)
			}
			return errPartitioned
		}
		return next(ctx, cmds)
	}
}

// contender is one process campaigning for the lease in a test.
type contender struct {
	lease *Lease
	rdb   *redis.Client
	part  *partition
	log   *testlog.Buffer
	done  chan error
	stop  context.CancelFunc
}

// newClient returns a client of addr with its own pool (a separate process).
func newClient(t testing.TB, addr string) *redis.Client { return redistest.ClientOf(t, addr) }

// startContender makes a lease on its own client and runs it with fn until
// the test ends (or stop is called).
func startContender(t *testing.T, addr, bot string, cfg leaseConfig, fn func(context.Context, int64) error) *contender {
	t.Helper()
	c := &contender{rdb: newClient(t, addr), part: &partition{}, log: &testlog.Buffer{}, done: make(chan error, 1)}
	c.rdb.AddHook(c.part)
	cfg.Logger = c.log.Logger()
	var err error
	c.lease, err = newLease(c.rdb, bot, cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	go func() { c.done <- c.lease.Run(ctx, fn) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-c.done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("Lease.Run did not return within 10s of cancel")
		}
	})
	return c
}

// stopAndWait stops a contender's Run and returns its result.
func (c *contender) stopAndWait(t *testing.T) error {
	t.Helper()
	c.stop()
	select {
	case err := <-c.done:
		c.done <- err // for the cleanup
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Lease.Run did not return within 10s of cancel")
		return nil
	}
}

// blockUntilDone is a leader function that holds leadership until told otherwise.
func blockUntilDone(ctx context.Context, _ int64) error {
	<-ctx.Done()
	return nil
}

// leaders returns the contenders that currently say they lead.
func leaders(cs []*contender) []*contender {
	var out []*contender
	for _, c := range cs {
		if c.lease.State().Leader {
			out = append(out, c)
		}
	}
	return out
}

// runReporter runs rep until stop, which cancels Run and returns its error;
// stop also runs at the end of the test, and a second call returns the same.
func runReporter(t *testing.T, rep *reporter) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rep.run(ctx) }()
	stop = sync.OnceValue(func() (err error) {
		cancel()
		httpx.Within("the reporter's Run to return", func() { err = <-done })
		return err
	})
	t.Cleanup(func() { _ = stop() })
	return stop
}

// oneShardReporter makes the reporter of one shard in guilds guilds, woken
// by sig, every hour by clk.
func oneShardReporter(t *testing.T, counts *shardCounts, guilds *atomic.Int64, sig *signal, cfg reporterConfig, clk clock.Clock) *reporter {
	t.Helper()
	cfg.Every = time.Hour
	rep, err := newReporter(counts, func() []shardReport { return []shardReport{{Guilds: int(guilds.Load())}} },
		WithReporterClock(cfg, clk))
	require.NoError(t, err)
	rep.changed = sig.changed
	return rep
}

// postedServers returns the servers of counts' total: what a leader would
// post, -1 while the total cannot be read or is not postable.
func postedServers(ctx context.Context, counts *shardCounts) int64 {
	tot, err := counts.total(ctx)
	if err != nil || !tot.Postable() {
		return -1
	}
	return tot.Servers
}

// WithReporterClock sets the reporter's clock (tests advance a fake one).
func WithReporterClock(cfg reporterConfig, c clock.Clock) reporterConfig {
	cfg.clock = c
	return cfg
}

// Postable reports whether the total covers every shard.
func (t fleetTotal) Postable() bool { return t.ShardCount > 0 && len(t.Missing) == 0 }
