package fleet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
)

func TestFenceRefusesAnOlderTerm(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	a := startContender(t, srv.Addr(), "fence1", shortLease, blockUntilDone)
	require.Eventually(t, func() bool { return a.lease.State().Leader }, 5*time.Second, 5*time.Millisecond)
	old := a.lease.Fence(a.lease.State().Token)
	require.NoError(t, old.Set(ctx, rdb, Key("fence1", "k"), "a", 0))

	require.NoError(t, a.stopAndWait(t))
	b := startContender(t, srv.Addr(), "fence1", shortLease, blockUntilDone)
	require.Eventually(t, func() bool { return b.lease.State().Leader }, 5*time.Second, 5*time.Millisecond)

	err := old.Set(ctx, rdb, Key("fence1", "k"), "stale", time.Minute)
	require.ErrorIs(t, err, ErrFenced)
	cur := b.lease.Fence(b.lease.State().Token)
	require.NoError(t, cur.Set(ctx, rdb, Key("fence1", "k"), "b", time.Minute))
	assert.Equal(t, "b", rdb.Get(ctx, Key("fence1", "k")).Val())
	assert.Positive(t, rdb.PTTL(ctx, Key("fence1", "k")).Val())

	require.ErrorIs(t, Fence{}.Set(ctx, rdb, "x", "y", 0), ErrNoFence)
	require.ErrorIs(t, cur.Set(ctx, nil, "x", "y", 0), topgg.ErrNilArgument)
}

func TestLeadershipRecoversAfterRedisIsKilledAndRestarted(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	var cs []*contender
	for range 3 {
		cs = append(cs, startContender(t, srv.Addr(), "restart", shortLease, blockUntilDone))
	}
	require.Eventually(t, func() bool { return len(leaders(cs)) == 1 }, 5*time.Second, 5*time.Millisecond)
	before := leaders(cs)[0].lease.State().Token

	srv.Kill()
	// Leader-only work pauses: nobody may lead while Redis is unreachable.
	require.Eventually(t, func() bool { return len(leaders(cs)) == 0 }, 2*shortLease.TTL, 5*time.Millisecond,
		"the leader kept leading without Redis")
	assert.Never(t, func() bool { return len(leaders(cs)) != 0 }, shortLease.TTL/2, 10*time.Millisecond)

	srv.Restart()
	require.Eventually(t, func() bool { return len(leaders(cs)) == 1 }, 3*shortLease.TTL, 5*time.Millisecond,
		"leadership did not recover after Redis came back")
	l := leaders(cs)[0]
	st := l.lease.State()
	assert.Greater(t, st.Token, before, "the AOF kept the token counter")
	rdb := srv.Client(t)
	require.NoError(t, l.lease.Fence(st.Token).Set(ctx, rdb, Key("restart", "k"), "v", 0))
	warned := 0
	for _, c := range cs { // a contender waiting out the TTL may not have tried Redis during the outage
		if strings.Contains(c.log.String(), "level=WARN") {
			warned++
		}
	}
	assert.Positive(t, warned, "Redis errors are logged")
}

func TestUnreachableRedisNeitherPanicsNorLeads(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	addr := srv.Addr()
	srv.Kill() // a port where nothing listens
	c := startContender(t, addr, "down", shortLease, blockUntilDone)
	require.Eventually(t, func() bool { return strings.Contains(c.log.String(), "lease campaign: Redis error") },
		5*time.Second, 5*time.Millisecond)
	assert.False(t, c.lease.State().Leader)
	require.NoError(t, c.stopAndWait(t))
}

func TestRedisPasswordNeverShows(t *testing.T) {
	t.Parallel()
	const pw = "hunter2-Sup3rSecret"
	srv := redistest.Start(t, redistest.WithPassword(pw))

	// A wrong password: errors are logged, never with the password in them.
	wrong, err := NewUniversalClient("redis://:" + pw + "-wrong@" + srv.Addr() + "/0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = wrong.Close() })
	var logs testlog.Buffer
	l, err := newLease(wrong, "pw", leaseConfig{TTL: time.Second, Logger: logs.Logger()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, blockUntilDone) }()
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "WRONGPASS") }, 5*time.Second, 5*time.Millisecond)
	cancel()
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)

	// The right password works.
	good, err := NewUniversalClient(srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = good.Close() })
	require.NoError(t, good.Ping(context.Background()).Err())
	counts, err := newShardCounts(good, "pw", 4, countsConfig{})
	require.NoError(t, err)

	var shown strings.Builder
	shown.WriteString(logs.String())
	for _, v := range []any{l, counts, l.State(), l.Fence(1), leaseConfig{}, countsConfig{}} {
		fmt.Fprintf(&shown, "%v %+v %#v\n", v, v, v)
	}
	for _, bad := range []string{
		"redis://:" + pw + "@127.0.0.1:bad/0",     // bad port
		"redis://:" + pw + "/x@127.0.0.1:6379/0",  // a '/' in the password
		"redis://:" + pw + "@127.0.0.1:6379/0/1",  // bad path
		"redis://:" + pw + "@127.0.0.1:6379/zero", // bad db
		"http://:" + pw + "@127.0.0.1:6379/0",     // bad scheme
		"redis://:" + pw + "@127.0.0.1:6379/0?dial_timeout=" + pw,
	} {
		_, err := NewUniversalClient(bad)
		require.ErrorAs(t, err, new(*topgg.ConfigError), bad)
		fmt.Fprintf(&shown, "%v\n", err)
	}
	assert.NotContains(t, shown.String(), pw)
	assert.NotContains(t, shown.String(), "hunter2")
}

func TestRedissURLTurnsTLSOn(t *testing.T) {
	t.Parallel()
	// No TLS server here (redis-server's TLS needs certificates): check that
	// the options carry TLS, and a plain URL does not.
	opts, err := parseURL("rediss://:pw@redis.example:6380/2")
	require.NoError(t, err)
	require.NotNil(t, opts.TLSConfig)
	assert.Equal(t, "redis.example", opts.TLSConfig.ServerName)
	assert.Equal(t, 2, opts.DB)
	assert.True(t, opts.ContextTimeoutEnabled)
	opts, err = parseURL("redis://127.0.0.1:6379")
	require.NoError(t, err)
	assert.Nil(t, opts.TLSConfig)
}

func TestRedissURLWorksEndToEnd(t *testing.T) {
	t.Parallel()
	const pw = "tls-Secret-pw"
	srv := redistest.Start(t, redistest.WithTLS(), redistest.WithPassword(pw))
	require.True(t, strings.HasPrefix(srv.URL(), "rediss://"))
	opts, err := parseURL(srv.URL())
	require.NoError(t, err)
	require.NotNil(t, opts.TLSConfig, "rediss:// turns TLS on")
	opts.TLSConfig.RootCAs = srv.RootCAs() // the test's self-signed certificate
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })

	l, err := newLease(rdb, "tls", shortLease)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, l.Run(ctx, func(lctx context.Context, token int64) error {
		return l.Fence(token).Set(lctx, rdb, Key("tls", "k"), "v", 0)
	}))
	c, err := newShardCounts(rdb, "tls", 1, countsConfig{})
	require.NoError(t, err)
	require.NoError(t, c.publish(ctx, []shardReport{{Shard: 0, Guilds: 3}}))
	tot, err := c.total(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), tot.Servers)

	// Without the CA the certificate is refused, and the error holds no password.
	bad, err := NewUniversalClient(srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = bad.Close() })
	err = bad.Ping(ctx).Err()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), pw)
}
