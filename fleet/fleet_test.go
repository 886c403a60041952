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

func TestFleetConstructionAndMisuse(t *testing.T) {
	t.Parallel()
	_, err := New(nil, Config{Bot: "b", ShardCount: 1})
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	_, err = Open("http://:hunter2@127.0.0.1:1", Config{Bot: "b", ShardCount: 1})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	assert.NotContains(t, err.Error(), "hunter2")
	_, err = Open("redis://127.0.0.1:1", Config{Bot: "", ShardCount: 1})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	_, err = Open("redis://127.0.0.1:1", Config{Bot: "b"})
	require.ErrorAs(t, err, new(*topgg.ConfigError))

	f, err := Open("redis://:hunter2@127.0.0.1:1/0", Config{Bot: "b", ShardCount: 6, OnChange: func(LeaseState) {}})
	require.NoError(t, err)
	assert.Equal(t, 6, f.counts.shardCount)
	assert.NotNil(t, f.lease.onChange, "Config.OnChange is the lease's hook")
	assert.NotNil(t, f.Lease())
	_, _, err = f.Counts(nil)
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	require.NoError(t, f.Close())

}

// TestFleetLeaseTTLIsBounded: Config.LeaseTTL is refused outside
// [MinLeaseTTL, MaxLeaseTTL], naming the field and the bounds; zero is the
// default and the bounds themselves are accepted.
func TestFleetLeaseTTLIsBounded(t *testing.T) {
	t.Parallel()
	for _, ttl := range []time.Duration{-time.Second, 100 * time.Millisecond, MinLeaseTTL - time.Nanosecond, MaxLeaseTTL + time.Nanosecond, time.Hour} {
		f, err := Open("redis://127.0.0.1:1", Config{Bot: "b", ShardCount: 1, LeaseTTL: ttl})
		require.ErrorAs(t, err, new(*topgg.ConfigError), ttl)
		assert.Nil(t, f)
		assert.ErrorContains(t, err, "LeaseTTL")
		assert.ErrorContains(t, err, "between 1s and 10m0s")
	}
	for _, ttl := range []time.Duration{0, MinLeaseTTL, MaxLeaseTTL} {
		f, err := Open("redis://127.0.0.1:1", Config{Bot: "b", ShardCount: 1, LeaseTTL: ttl})
		require.NoError(t, err, ttl)
		require.NoError(t, f.Close())
	}
	assert.Equal(t, time.Second, MinLeaseTTL)
	assert.Equal(t, 10*time.Minute, MaxLeaseTTL)
}

// No error of ParseURL shows the password, wherever the URL holds it: after
// the colon, or alone before the @ (the pre-ACL form "redis://secret@host").
func TestParseURLErrorsShowNoPassword(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"redis://:hunter2@127.0.0.1:6379/x",
		"redis://user:hunter2@127.0.0.1:6379/1/2",
		"redis://hunter2@127.0.0.1:6379/x",
		"http://hunter2@127.0.0.1:6379",
		"redis://u:hunter2@127.0.0.1:6379/0?dial_timeout=hunter2",
	} {
		_, err := parseURL(raw)
		if assert.ErrorAs(t, err, new(*topgg.ConfigError), raw) {
			assert.NotContains(t, err.Error(), "hunter2", raw)
		}
	}
	_, err := parseURL("redis://user:pw@127.0.0.1:6379/x")
	assert.Contains(t, err.Error(), "redis://xxxxx@127.0.0.1:6379/x", "the user info is marked, not shown")
}

// TestParseURLErrorsKeepTheirWords: a short password or pre-ACL user name is
// scrubbed where it stands alone, not inside the words of go-redis's message
// ("e" garbled "r[xxxxx]dis: invalid databas[xxxxx]").
func TestParseURLErrorsKeepTheirWords(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"redis://:e@127.0.0.1:6379/x", "redis://e@127.0.0.1:6379/x", "redis://user:r@127.0.0.1:6379/x"} {
		_, err := parseURL(raw)
		if assert.ErrorAs(t, err, new(*topgg.ConfigError), raw) {
			assert.Contains(t, err.Error(), `redis: invalid database number: "x"`, raw)
		}
	}
}

// The URL selects the deployment: a single node, Redis Cluster, or a master
// through Sentinel, each with ContextTimeoutEnabled (the lease bounds its
// requests by it).
func TestURLSelectsTheDeployment(t *testing.T) {
	t.Parallel()
	c, err := NewUniversalClient("redis://:pw@127.0.0.1:6379/2")
	require.NoError(t, err)
	closeLater(t, c)
	single, ok := c.(*redis.Client)
	require.True(t, ok, "%T", c)
	assert.Equal(t, 2, single.Options().DB)
	assert.True(t, single.Options().ContextTimeoutEnabled)

	c, err = NewUniversalClient("redis+cluster://:pw@127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002")
	require.NoError(t, err)
	closeLater(t, c)
	cluster, ok := c.(*redis.ClusterClient)
	require.True(t, ok, "%T", c)
	assert.Equal(t, []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}, cluster.Options().Addrs)
	assert.Equal(t, "pw", cluster.Options().Password)
	assert.True(t, cluster.Options().ContextTimeoutEnabled)
	assert.Equal(t, time.Second, cluster.Options().ClusterStateReloadInterval, "a promotion is found within a second")

	c, err = NewUniversalClient("rediss+cluster://127.0.0.1:7000")
	require.NoError(t, err)
	closeLater(t, c)
	assert.NotNil(t, c.(*redis.ClusterClient).Options().TLSConfig, "rediss+cluster is TLS")

	c, err = NewUniversalClient("redis+sentinel://127.0.0.1:26379/1?master_name=mymaster&addr=127.0.0.1:26380&password=mpw")
	require.NoError(t, err)
	closeLater(t, c)
	failover, ok := c.(*redis.Client)
	require.True(t, ok, "%T", c)
	assert.Equal(t, 1, failover.Options().DB)
	assert.Equal(t, "mpw", failover.Options().Password, "the password parameter is the master's")
	assert.True(t, failover.Options().ContextTimeoutEnabled)

	_, err = NewUniversalClient("redis+sentinel://127.0.0.1:26379/0")
	require.ErrorAs(t, err, new(*topgg.ConfigError), "a Sentinel URL without master_name")
	for _, bad := range []string{"http://127.0.0.1", "redis+ring://127.0.0.1", "cluster://127.0.0.1", "::"} {
		_, err = NewUniversalClient(bad)
		require.ErrorAs(t, err, new(*topgg.ConfigError), bad)
	}
}

// No error of a Cluster or Sentinel URL shows a password: the user info's
// (the sentinels' own, for Sentinel) or the master's password parameter.
func TestHAURLErrorsShowNoPassword(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"redis+cluster://:hunter2@127.0.0.1:7000?addr=hunter2",
		"redis+cluster://u:hunter2@127.0.0.1:7000?bogus=hunter2",
		"rediss+cluster://hunter2@127.0.0.1:7000?addr=x",
		"redis+sentinel://:hunter2@127.0.0.1:26379/x?master_name=m",
		"redis+sentinel://127.0.0.1:26379/0?master_name=m&password=hunter2&addr=hunter2",
		"redis+sentinel://127.0.0.1:26379/0?password=hunter2",
		"redis+nothing://:hunter2@127.0.0.1",
		"redis+cluster://:hunter2@127.0.0.1:7000/%zz",
	} {
		_, err := NewUniversalClient(raw)
		if assert.ErrorAs(t, err, new(*topgg.ConfigError), raw) {
			assert.NotContains(t, err.Error(), "hunter2", raw)
		}
	}
	_, err := Open("redis+cluster://:hunter2@127.0.0.1:7000?addr=hunter2", Config{Bot: "b", ShardCount: 1})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	assert.NotContains(t, err.Error(), "hunter2")
}

// TestURLWithoutHostIsRefused: a URL with no host (go-redis would dial
// localhost:6379) is a *ConfigError for every deployment, showing no password.
func TestURLWithoutHostIsRefused(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"redis://:hunter2@/0", "rediss://hunter2@:6380", "redis://", "redis:///1",
		"redis+cluster://:hunter2@?addr=127.0.0.1:7001", "redis+sentinel://:hunter2@/0?master_name=m&addr=127.0.0.1:26380",
	} {
		_, err := NewUniversalClient(raw)
		if assert.ErrorAs(t, err, new(*topgg.ConfigError), raw) {
			assert.Contains(t, err.Error(), "has no host", raw)
			assert.NotContains(t, err.Error(), "hunter2", raw)
		}
	}
}

// closeLater closes c when the test ends.
func closeLater(t *testing.T, c redis.UniversalClient) { t.Cleanup(func() { _ = c.Close() }) }

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
