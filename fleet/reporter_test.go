package fleet

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
)

func TestReporterPublishesAtOnceAndEveryPeriodAndSurvivesRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	counts, err := newShardCounts(newClient(t, srv.Addr()), "rep", 2, countsConfig{})
	require.NoError(t, err)
	var guilds atomic.Int64
	guilds.Store(7)
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	var logs testlog.Buffer
	rep, err := newReporter(counts, func() []shardReport {
		return []shardReport{{Shard: 0, Guilds: int(guilds.Load())}, {Shard: 1, Guilds: 1}}
	}, WithReporterClock(reporterConfig{Every: time.Minute, Logger: logs.Logger()}, fake))
	require.NoError(t, err)

	stop := runReporter(t, rep)
	total := func() int64 { return postedServers(ctx, counts) }
	require.Eventually(t, func() bool { return total() == 8 }, 5*time.Second, 5*time.Millisecond, "no publish at start")
	require.ErrorIs(t, rep.run(ctx), topgg.ErrRunning)

	guilds.Store(70)
	require.Eventually(t, func() bool { return fake.Timers() == 1 }, 5*time.Second, time.Millisecond)
	fake.Advance(time.Minute)
	require.Eventually(t, func() bool { return total() == 71 }, 5*time.Second, 5*time.Millisecond, "no publish after a period")

	srv.Kill()
	require.Eventually(t, func() bool { return fake.Timers() == 1 }, 5*time.Second, time.Millisecond)
	fake.Advance(time.Minute)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "publishing shard counts failed") },
		5*time.Second, time.Millisecond)

	srv.Restart()
	guilds.Store(700)
	require.Eventually(t, func() bool {
		if fake.Timers() == 1 {
			fake.Advance(time.Minute)
		}
		return total() == 701
	}, 10*time.Second, 10*time.Millisecond, "publishing did not resume after Redis came back")

	require.NoError(t, stop())
}
