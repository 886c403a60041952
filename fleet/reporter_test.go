package fleet_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
)

func TestReporterPublishesAtOnceAndEveryPeriodAndSurvivesRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	counts, err := fleet.NewCounts(newClient(t, srv.Addr()), "rep", 2, fleet.CountsConfig{})
	require.NoError(t, err)
	var guilds atomic.Int64
	guilds.Store(7)
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	var logs testlog.Buffer
	rep, err := fleet.NewReporter(counts, func() []fleet.ShardCount {
		return []fleet.ShardCount{{Shard: 0, Guilds: int(guilds.Load())}, {Shard: 1, Guilds: 1}}
	}, fleet.WithReporterClock(fleet.ReporterConfig{Every: time.Minute, Logger: logs.Logger()}, fake))
	require.NoError(t, err)

	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rep.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })

	total := func() int64 {
		tot, err := counts.Total(ctx)
		if err != nil || !tot.Postable() {
			return -1
		}
		return tot.Servers
	}
	require.Eventually(t, func() bool { return total() == 8 }, 5*time.Second, 5*time.Millisecond, "no publish at start")
	require.ErrorIs(t, rep.Run(ctx), topgg.ErrRunning)

	guilds.Store(70)
	require.Eventually(t, func() bool { return fake.Timers() == 1 }, 5*time.Second, time.Millisecond)
	fake.Advance(time.Minute)
	require.Eventually(t, func() bool { return total() == 71 }, 5*time.Second, 5*time.Millisecond, "no publish after a period")

	srv.Kill()
	require.Eventually(t, func() bool { return fake.Timers() == 1 }, 5*time.Second, time.Millisecond)
	fake.Advance(time.Minute)
	require.Eventually(t, func() bool { return rep.Stats().Failed >= 1 }, 5*time.Second, time.Millisecond)
	assert.Contains(t, logs.String(), "publishing shard counts failed")

	srv.Restart()
	guilds.Store(700)
	require.Eventually(t, func() bool {
		if fake.Timers() == 1 {
			fake.Advance(time.Minute)
		}
		return total() == 701
	}, 10*time.Second, 10*time.Millisecond, "publishing did not resume after Redis came back")

	cancel()
	require.NoError(t, <-done)
	done <- nil
	assert.GreaterOrEqual(t, rep.Stats().Published, uint64(3))
}

func TestReporterMisuse(t *testing.T) {
	t.Parallel()
	_, err := fleet.NewReporter(nil, func() []fleet.ShardCount { return nil }, fleet.ReporterConfig{})
	require.ErrorIs(t, err, topgg.ErrNotConfigured)
	var zero fleet.Reporter
	require.ErrorIs(t, zero.Run(context.Background()), topgg.ErrNotConfigured)
	assert.Zero(t, (*fleet.Reporter)(nil).Stats())
}
