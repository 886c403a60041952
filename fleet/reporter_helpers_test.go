package fleet

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/httpx"
)

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
