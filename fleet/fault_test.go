package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
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
