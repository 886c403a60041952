package redistest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
)

func TestKillAndRestartKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	c := srv.Client(t)
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())

	srv.Kill()
	require.Error(t, c.Ping(ctx).Err(), "the server is gone after Kill")

	srv.Restart()
	got, err := c.Get(ctx, "k").Result()
	require.NoError(t, err)
	assert.Equal(t, "v", got, "AOF with appendfsync always keeps an acknowledged write across kill -9")
}

func TestPasswordIsRequired(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithPassword("s3cret-pw"))
	require.NoError(t, srv.Client(t).Ping(context.Background()).Err())
	assert.Contains(t, srv.URL(), "s3cret-pw")
}

// recTB records Skip and Fatal, and ends the goroutine as testing does.
type recTB struct {
	testing.TB
	skipped, fatal string
}

func (r *recTB) Helper()           {}
func (r *recTB) Skip(args ...any)  { r.skipped = fmt.Sprint(args...); runtime.Goexit() }
func (r *recTB) Fatal(args ...any) { r.fatal = fmt.Sprint(args...); runtime.Goexit() }

// TestMissingBinarySkipsOrFailsUnderCI: without redis-server or
// redis-sentinel, a test that needs it skips naming the package to install;
// under CI it fails instead.
func TestMissingBinarySkipsOrFailsUnderCI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, tc := range []struct {
		start func(testing.TB)
		deb   string
	}{
		{func(t testing.TB) { redistest.Require(t) }, "redis-server"},
		{func(t testing.TB) { redistest.Start(t) }, "redis-server"},
		{func(t testing.TB) { redistest.StartSentinel(t) }, "redis-sentinel"},
	} {
		for _, ci := range []string{"", "true"} {
			t.Setenv("CI", ci)
			r := &recTB{TB: t}
			done := make(chan struct{})
			go func() { defer close(done); tc.start(r) }()
			<-done
			got := r.skipped
			if ci != "" {
				assert.Empty(t, got, "CI: no skip")
				got = r.fatal
			}
			assert.Contains(t, got, "apt-get install "+tc.deb, "CI=%q", ci)
		}
	}
}

func TestTLSServerAnswersOverTLSOnly(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithTLS())
	assert.True(t, strings.HasPrefix(srv.URL(), "rediss://"))
	require.NoError(t, srv.Client(t).Ping(context.Background()).Err())
	plain := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: time.Second})
	defer plain.Close()
	require.Error(t, plain.Ping(context.Background()).Err(), "a plain client must not get through")
}

const (
	redistestWait = 20 * time.Second
	// sentinelActWait bounds what the sentinels do: a sentinel whose timer
	// was held on a loaded machine acts on nothing for the 30 s of TILT mode.
	sentinelActWait = 50 * time.Second
	tick            = 20 * time.Millisecond
)

// TestClusterFailsOverToTheReplica: a write acknowledged by the replica
// (WAIT) survives the kill of its master; the replica serves the slot after
// the failover, and the killed node rejoins as a replica when restarted.
func TestClusterFailsOverToTheReplica(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	require.Len(t, cl.Addrs(), 6)
	c := cl.Client(t)
	require.NoError(t, c.Set(ctx, "{k}x", "v", 0).Err())
	master, err := cl.MasterOf(ctx, "{k}x")
	require.NoError(t, err)
	mc := master.Client(t)
	require.NoError(t, mc.Set(ctx, "{k}x", "w", 0).Err())
	require.Equal(t, int64(1), mc.Do(ctx, "WAIT", 1, 5000).Val(), "the replica did not acknowledge")

	killed, promoted := cl.KillMasterOf(ctx, "{k}x")
	assert.Equal(t, master, killed)
	assert.NotEqual(t, killed, promoted)
	got, err := promoted.Client(t).Get(ctx, "{k}x").Result()
	require.NoError(t, err)
	assert.Equal(t, "w", got, "the promoted replica lost an acknowledged write")
	require.Eventually(t, func() bool { return c.Get(ctx, "{k}x").Val() == "w" }, redistestWait, tick,
		"the cluster client never found the new master")

	killed.Restart()
	require.Eventually(t, func() bool {
		role, err := killed.Client(t).Do(ctx, "ROLE").Slice()
		return err == nil && role[0] == "slave"
	}, redistestWait, tick, "the old master did not rejoin as a replica")
}

// TestSentinelPromotesTheReplica: the failover client follows the sentinels
// to the promoted replica, which kept an acknowledged write.
func TestSentinelPromotesTheReplica(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	require.Len(t, s.SentinelAddrs(), 3)
	c := s.Client(t)
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	require.Equal(t, int64(1), c.Do(ctx, "WAIT", 1, 5000).Val())
	first, err := s.Master(ctx)
	require.NoError(t, err)

	killed, promoted := s.KillMaster(ctx)
	assert.Equal(t, first, killed)
	assert.Equal(t, s.Other(first), promoted)
	require.Eventually(t, func() bool { return c.Get(ctx, "k").Val() == "v" && c.Set(ctx, "k2", "x", 0).Err() == nil },
		sentinelActWait, tick, "the failover client never reached the new master")

	killed.Restart()
	require.Eventually(t, func() bool {
		role, err := killed.Client(t).Do(ctx, "ROLE").Slice()
		return err == nil && role[0] == "slave"
	}, sentinelActWait, tick, "the sentinels did not make the old master a replica")
}
