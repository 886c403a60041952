package fleet

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
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

// evalCounter is a go-redis hook counting the scripts a client sends (a
// publish is one EVAL): the round trips the reporter makes.
type evalCounter struct{ n atomic.Int64 }

func (e *evalCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (e *evalCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "eval" {
			e.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (e *evalCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// signal is a change broadcast like autopost.Counter.Changed: the channel
// the next fire closes.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// timerLog is a fake clock that remembers the duration of the last timer
// asked for, so that a test knows which wait the code under test is in.
type timerLog struct {
	*clock.Fake
	last atomic.Int64
}

func (c *timerLog) NewTimer(d time.Duration) clock.Timer {
	c.last.Store(int64(d))
	return c.Fake.NewTimer(d)
}

// waitingFor reports whether the code waits on one timer, of d.
func (c *timerLog) waitingFor(d time.Duration) bool {
	return c.Timers() == 1 && time.Duration(c.last.Load()) == d
}

// TestReporterCoalescesChanges: a change is published without waiting for
// the period, but no sooner than 250 ms after the publish before it, and the
// changes of those 250 ms go out in one publish of the newest counts.
func TestReporterCoalescesChanges(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := newClient(t, srv.Addr())
	evals := &evalCounter{}
	rdb.AddHook(evals)
	counts, err := newShardCounts(rdb, "coalesce", 1, countsConfig{})
	require.NoError(t, err)
	var guilds atomic.Int64
	var sig signal
	fake := &timerLog{Fake: clock.NewFake(time.Unix(1_700_000_000, 0))}
	runReporter(t, oneShardReporter(t, counts, &guilds, &sig, reporterConfig{}, fake))
	total := func() int64 { return postedServers(ctx, counts) }
	require.Eventually(t, func() bool { return total() == 0 && fake.waitingFor(time.Hour) }, 5*time.Second, time.Millisecond,
		"no publish at start")
	require.EqualValues(t, 1, evals.n.Load())

	// A storm of 100 joins within the gap after the first publish: one
	// publish, once the gap has passed, with all of them.
	for range 100 {
		guilds.Add(1)
		sig.fire()
	}
	require.Eventually(t, func() bool { return fake.waitingFor(minPublishGap) }, 5*time.Second, time.Millisecond,
		"a change did not end the period's wait")
	fake.Advance(minPublishGap - time.Millisecond)
	assert.EqualValues(t, 1, evals.n.Load(), "published sooner than the gap")
	fake.Advance(time.Millisecond)
	require.Eventually(t, func() bool { return total() == 100 }, 5*time.Second, time.Millisecond,
		"the coalesced publish never came")
	assert.EqualValues(t, 2, evals.n.Load(), "100 changes, one publish")

	// Long after the last publish, a change goes out at once.
	require.Eventually(t, func() bool { return fake.waitingFor(time.Hour) }, 5*time.Second, time.Millisecond)
	fake.Advance(time.Second)
	guilds.Add(1)
	sig.fire()
	require.Eventually(t, func() bool { return total() == 101 }, 5*time.Second, time.Millisecond,
		"a lone change waited")
	assert.EqualValues(t, 3, evals.n.Load())
}

// TestReporterPublishesAPendingChangeWhenStopped: a change not yet
// published (inside the gap) when the reporter is stopped is published
// before Run returns, so that a process that stops (a leader handing over)
// leaves its newest counts, which the next leader's total needs.
func TestReporterPublishesAPendingChangeWhenStopped(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	counts, err := newShardCounts(newClient(t, srv.Addr()), "stopping", 1, countsConfig{})
	require.NoError(t, err)
	for _, inGap := range []bool{true, false} {
		var guilds atomic.Int64
		var sig signal
		fake := &timerLog{Fake: clock.NewFake(time.Unix(1_700_000_000, 0))}
		stop := runReporter(t, oneShardReporter(t, counts, &guilds, &sig, reporterConfig{}, fake))
		require.Eventually(t, func() bool { return fake.waitingFor(time.Hour) }, 5*time.Second, time.Millisecond)
		guilds.Store(7)
		if inGap {
			sig.fire()
			require.Eventually(t, func() bool { return fake.waitingFor(minPublishGap) }, 5*time.Second, time.Millisecond)
		}
		require.NoError(t, stop())
		tot, err := counts.total(ctx)
		require.NoError(t, err)
		if inGap {
			assert.EqualValues(t, 7, tot.Servers, "the pending change was not published on stop")
		} else {
			assert.EqualValues(t, 0, tot.Servers, "published on stop without a change")
		}
	}
}

// TestReporterRetriesWithinASecond: a change made while Redis is down is
// published within a second of its return, not a period later.
func TestReporterRetriesWithinASecond(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	counts, err := newShardCounts(newClient(t, srv.Addr()), "retry", 1, countsConfig{})
	require.NoError(t, err)
	var guilds atomic.Int64
	var sig signal
	var logs testlog.Buffer
	fake := &timerLog{Fake: clock.NewFake(time.Unix(1_700_000_000, 0))}
	runReporter(t, oneShardReporter(t, counts, &guilds, &sig, reporterConfig{Logger: logs.Logger()}, fake))
	require.Eventually(t, func() bool { return fake.waitingFor(time.Hour) }, 5*time.Second, time.Millisecond)

	srv.Kill()
	guilds.Store(3)
	sig.fire()
	require.Eventually(t, func() bool { return fake.waitingFor(minPublishGap) }, 5*time.Second, time.Millisecond)
	fake.Advance(minPublishGap)
	require.Eventually(t, func() bool {
		d := time.Duration(fake.last.Load())
		return fake.Timers() == 1 && d > 0 && d <= maxRetry
	}, 10*time.Second, time.Millisecond, "a failed publish is not retried within a second")
	srv.Restart()
	require.Eventually(t, func() bool {
		if fake.Timers() == 1 {
			fake.Advance(maxRetry)
		}
		tot, err := counts.total(ctx)
		return err == nil && tot.Servers == 3
	}, 10*time.Second, 10*time.Millisecond, "the change was not published after Redis came back")
}
