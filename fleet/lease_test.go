package fleet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/fence"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
)

// shortLease is a lease fast enough for tests and slow enough for -race on two
// busy cores.
var shortLease = leaseConfig{TTL: 1200 * time.Millisecond}

func TestOneLeaderAmongFiveContendersKeptByRenewal(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var inside, most atomic.Int32
	fn := func(ctx context.Context, _ int64) error {
		n := inside.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-ctx.Done()
		inside.Add(-1)
		return nil
	}
	var cs []*contender
	for range 5 {
		cs = append(cs, startContender(t, srv.Addr(), "bot1", shortLease, fn))
	}
	require.Eventually(t, func() bool { return len(leaders(cs)) == 1 }, 5*time.Second, 5*time.Millisecond)
	first := leaders(cs)[0].lease.State()
	assert.Positive(t, first.Token)

	// Over three TTLs, renewals keep the same leader and term, and nobody else
	// ever runs the leader function.
	assert.Never(t, func() bool {
		ls := leaders(cs)
		return len(ls) != 1 || ls[0].lease.State().Token != first.Token
	}, 3*shortLease.TTL, 10*time.Millisecond, "the leader changed or a second leader appeared")
	assert.Equal(t, int32(1), most.Load(), "never two leader functions at once")
}

func TestLeaderThatCannotRenewStopsBeforeExpiryAndAnotherTakesOver(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	obs := srv.Client(t)
	ctx := context.Background()
	type stopped struct {
		pttl  time.Duration
		cause error
		took  time.Duration
	}
	var cutAt atomic.Pointer[time.Time]
	stops := make(chan stopped, 1)
	fnA := func(lctx context.Context, _ int64) error {
		<-lctx.Done()
		now := time.Now()
		// The lease must still be alive in Redis when the leader stops.
		pttl, _ := obs.PTTL(ctx, Key("bot2", "lease")).Result()
		stops <- stopped{pttl: pttl, cause: context.Cause(lctx), took: now.Sub(*cutAt.Load())}
		return lctx.Err()
	}
	a := startContender(t, srv.Addr(), "bot2", shortLease, fnA)
	require.Eventually(t, func() bool { return a.lease.State().Leader }, 5*time.Second, 5*time.Millisecond)
	tokenA := a.lease.State().Token

	var bToken atomic.Int64
	b := startContender(t, srv.Addr(), "bot2", shortLease, func(lctx context.Context, tok int64) error {
		bToken.Store(tok)
		return blockUntilDone(lctx, tok)
	})
	now := time.Now()
	cutAt.Store(&now)
	a.part.cut.Store(true) // A can no longer reach Redis: its renewals fail

	var s stopped
	select {
	case s = <-stops:
	case <-time.After(2 * shortLease.TTL):
		t.Fatal("the partitioned leader did not stop within 2 TTL")
	}
	assert.ErrorIs(t, s.cause, ErrLeaseLost)
	assert.Positive(t, s.pttl, "the leader stopped only after its lease had expired in Redis")
	assert.Less(t, s.took, shortLease.TTL, "the leader stopped within TTL of its last renewal")

	// Wait for B's leader work to have started with its token, not only for
	// its state to say leader: the assertion is on the token the work got.
	require.Eventually(t, func() bool { st := b.lease.State(); return st.Leader && bToken.Load() == st.Token },
		2*shortLease.TTL, 5*time.Millisecond, "no takeover within about 2 TTL")
	assert.Greater(t, bToken.Load(), tokenA, "the new term has a newer token")
	assert.False(t, a.lease.State().Leader)

	// A campaigns again after the loss: once it reaches Redis and B leaves, it leads.
	a.part.cut.Store(false)
	require.NoError(t, b.stopAndWait(t))
	require.Eventually(t, func() bool { return a.lease.State().Leader }, 3*shortLease.TTL, 5*time.Millisecond,
		"the old leader did not campaign again")
	assert.Greater(t, a.lease.State().Token, bToken.Load())
}

func TestReleaseOnReturnHandsOverAtOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	long := leaseConfig{TTL: 30 * time.Second}
	a := startContender(t, srv.Addr(), "bot3", long, blockUntilDone)
	require.Eventually(t, func() bool { return a.lease.State().Leader }, 5*time.Second, 5*time.Millisecond)
	b := startContender(t, srv.Addr(), "bot3", long, blockUntilDone)
	// b waits for a 30 s lease: only the release can hand it over quickly.
	require.Eventually(t, func() bool {
		return b.rdb.PubSubNumSub(context.Background(), Key("bot3", "lease:released")).Val()[Key("bot3", "lease:released")] > 0
	}, 5*time.Second, 5*time.Millisecond, "b never subscribed to releases")

	start := time.Now()
	require.NoError(t, a.stopAndWait(t))
	require.Eventually(t, func() bool { return b.lease.State().Leader }, 2*time.Second, time.Millisecond,
		"the successor did not take over at once after the release")
	t.Logf("handover took %v (TTL %v)", time.Since(start), long.TTL)
}

func TestLeaderFunctionReturningEndsRun(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var changes atomic.Int32
	cfg := shortLease
	cfg.OnChange = func(LeaseState) { changes.Add(1) }
	l, err := newLease(srv.Client(t), "bot4", cfg)
	require.NoError(t, err)
	boom := errors.New("boom")
	err = l.Run(context.Background(), func(context.Context, int64) error { return boom })
	require.ErrorIs(t, err, boom)
	exists, err := srv.Client(t).Exists(context.Background(), Key("bot4", "lease")).Result()
	require.NoError(t, err)
	assert.Zero(t, exists, "the lease is released when Run returns")
	st := l.State()
	assert.False(t, st.Leader)
	assert.Equal(t, int32(2), changes.Load(), "won, then released")
}

func TestSecondConcurrentRunIsRefused(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := startContender(t, srv.Addr(), "bot5", shortLease, blockUntilDone)
	require.Eventually(t, func() bool { return c.lease.State().Leader }, 5*time.Second, 5*time.Millisecond)
	require.ErrorIs(t, c.lease.Run(context.Background(), blockUntilDone), topgg.ErrRunning)
}

func TestMisuseIsAnError(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	_, err := newLease(nil, "b", leaseConfig{})
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	_, err = newLease(srv.Client(t), "", leaseConfig{})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	_, err = newLease(srv.Client(t), "a{b}", leaseConfig{})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	_, err = newLease(srv.Client(t), "b", leaseConfig{TTL: 99 * time.Millisecond})
	require.ErrorAs(t, err, new(*topgg.ConfigError))

	l, err := newLease(srv.Client(t), "b", leaseConfig{})
	require.NoError(t, err)
	require.ErrorIs(t, l.Run(context.Background(), nil), topgg.ErrNilArgument)
}

func TestOnChangeSeesEveryTransition(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var mu sync.Mutex
	var seen []LeaseState
	cfg := shortLease
	cfg.OnChange = func(s LeaseState) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
	l, err := newLease(srv.Client(t), "bot6", cfg)
	require.NoError(t, err)
	require.NoError(t, l.Run(context.Background(), func(context.Context, int64) error { return nil }))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2)
	assert.True(t, seen[0].Leader)
	assert.Positive(t, seen[0].Token)
	assert.False(t, seen[1].Leader)
}

// A panicking OnChange is contained: the term runs and ends as without it,
// and the log says which hook panicked.
func TestOnChangePanicIsContained(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	cfg := shortLease
	cfg.OnChange = func(LeaseState) { panic("metrics bug") }
	var ran atomic.Bool
	c := startContender(t, srv.Addr(), "bot-panic", cfg, func(context.Context, int64) error { ran.Store(true); return nil })
	require.Eventually(t, func() bool { return strings.Count(c.log.String(), "OnChange panicked") >= 2 }, 5*time.Second, 5*time.Millisecond)
	assert.True(t, ran.Load())
	assert.Contains(t, c.log.String(), "metrics bug")
}

func TestLeaseKeyWithoutExpiryIsNotPolledHard(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	key := Key("noexp", "lease")
	require.NoError(t, rdb.Set(ctx, key, "someone-else", 0).Err())
	c := startContender(t, srv.Addr(), "noexp", shortLease, blockUntilDone)
	require.Eventually(t, func() bool { return strings.Contains(c.log.String(), "lease key has no expiry") },
		5*time.Second, 5*time.Millisecond)
	assert.False(t, c.lease.State().Leader)
	require.NoError(t, rdb.Del(ctx, key).Err())
	require.Eventually(t, func() bool { return c.lease.State().Leader }, 3*shortLease.TTL, 5*time.Millisecond)
	assert.Equal(t, 1, strings.Count(c.log.String(), "lease key has no expiry"), "it waited a TTL between attempts")
}

// TestLeaseOnChangePanicIsContained: a panicking OnChange hook must not end
// Run nor the leader's work; the log names the hook.
func TestLeaseOnChangePanicIsContained(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var calls atomic.Int32
	cfg := shortLease
	cfg.OnChange = func(LeaseState) {
		calls.Add(1)
		panic("metrics hook bug")
	}
	var led atomic.Bool
	c := startContender(t, srv.Addr(), "onchange", cfg, func(ctx context.Context, tok int64) error {
		led.Store(true)
		return blockUntilDone(ctx, tok)
	})
	require.Eventually(t, func() bool { return led.Load() && c.lease.State().Leader }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, int32(1), calls.Load())
	assert.Contains(t, c.log.String(), "OnChange panicked")
	assert.Contains(t, c.log.String(), "metrics hook bug")
	assert.Equal(t, 1, strings.Count(c.log.String(), "[running]"), "the stack, once")
	// Run ends normally (the cleanup checks its nil error); the end of the
	// term calls the hook again, contained again.
	require.NoError(t, c.stopAndWait(t))
	assert.Equal(t, int32(2), calls.Load())
	assert.False(t, c.lease.State().Leader)
}

// TestLeaseKeyExpiringInTheFarFutureIsClampedAndLoggedOnce plants a lease
// key whose expiry is a year away (no holder with our TTL sets that): the
// contender does not trust the remaining time, polls every TTL, logs the key
// once, and leads as soon as the key is gone.
func TestLeaseKeyExpiringInTheFarFutureIsClampedAndLoggedOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	key := Key("farexp", "lease")
	require.NoError(t, rdb.Set(ctx, key, "someone-else", 365*24*time.Hour).Err())
	c := startContender(t, srv.Addr(), "farexp", shortLease, blockUntilDone)
	require.Eventually(t, func() bool { return strings.Contains(c.log.String(), "expires later than any holder sets") },
		5*time.Second, 5*time.Millisecond)
	// Two more TTLs: it keeps trying (the wait is clamped to TTL) and does
	// not log the same key again.
	assert.Never(t, func() bool { return c.lease.State().Leader }, 2*shortLease.TTL, 10*time.Millisecond)
	assert.Equal(t, 1, strings.Count(c.log.String(), "expires later than any holder sets"))
	require.NoError(t, rdb.Del(ctx, key).Err())
	// Within a TTL (not a year): it leads.
	require.Eventually(t, func() bool { return c.lease.State().Leader }, 3*shortLease.TTL, 5*time.Millisecond)
}

// TestDamagedFencingCounterIsAnErrorNamingTheKeyNotOverwritten: a token
// counter holding garbage stops the election with an error naming the key;
// nobody leads on a clock-based token and the key is left for an operator.
func TestDamagedFencingCounterIsAnErrorNamingTheKeyNotOverwritten(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	obs := srv.Client(t)
	ctx := context.Background()
	for _, garbage := range []string{"not-a-number", "12.5", "-3"} {
		bot := "damaged" + strings.NewReplacer(".", "", "-", "").Replace(garbage)
		key := Key(bot, "fence")
		require.NoError(t, obs.Set(ctx, key, garbage, 0).Err())
		c := startContender(t, srv.Addr(), bot, shortLease, blockUntilDone)
		require.Eventually(t, func() bool {
			return strings.Contains(c.log.String(), "level=ERROR") && strings.Contains(c.log.String(), key)
		}, 5*time.Second, 5*time.Millisecond, "no error naming %s: %s", key, c.log.String())
		assert.False(t, c.lease.State().Leader, "led on a counter holding %q", garbage)
		assert.Equal(t, garbage, obs.Get(ctx, key).Val(), "the damaged counter was overwritten")
		assert.Zero(t, obs.Exists(ctx, Key(bot, "lease")).Val(), "the lease was taken")
	}
}

// TestCheckFailsUntilLeadershipIsKnown: the "leadership" readiness check
// fails before Run, passes in the leader and in a follower once Redis has
// answered, fails in a follower cut off from Redis (and passes again when
// it is back), and fails once Run returned. OnChange sees the leader's
// transitions, not the follower's knowledge.
func TestCheckFailsUntilLeadershipIsKnown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)

	idle, err := newLease(newClient(t, srv.Addr()), "bot-check", shortLease)
	require.NoError(t, err)
	require.ErrorIs(t, idle.Check(context.Background()), ErrLeadershipUnknown, "before Run")

	changes := make(chan LeaseState, 16)
	cfg := shortLease
	cfg.OnChange = func(s LeaseState) { changes <- s }
	leader := startContender(t, srv.Addr(), "bot-check", cfg, blockUntilDone)
	require.Eventually(t, func() bool { return leader.lease.State().Leader }, 5*time.Second, 5*time.Millisecond)
	assert.NoError(t, leader.lease.Check(context.Background()))
	first := <-changes
	assert.True(t, first.Leader)
	assert.True(t, first.known)

	follower := startContender(t, srv.Addr(), "bot-check", cfg, blockUntilDone)
	require.Eventually(t, func() bool { return follower.lease.Check(context.Background()) == nil }, 5*time.Second, 5*time.Millisecond)
	assert.False(t, follower.lease.State().Leader)

	follower.part.cut.Store(true)
	require.Eventually(t, func() bool {
		return follower.lease.Check(context.Background()) != nil
	}, 5*time.Second, 5*time.Millisecond, "a follower cut off from Redis does not know who leads")
	assert.NoError(t, leader.lease.Check(context.Background()))
	follower.part.cut.Store(false)
	require.Eventually(t, func() bool { return follower.lease.Check(context.Background()) == nil }, 5*time.Second, 5*time.Millisecond)

	require.NoError(t, follower.stopAndWait(t))
	assert.ErrorIs(t, follower.lease.Check(context.Background()), ErrLeadershipUnknown, "after Run returned")
	require.NoError(t, leader.stopAndWait(t))
	assert.ErrorIs(t, leader.lease.Check(context.Background()), ErrLeadershipUnknown)
	last := <-changes
	assert.False(t, last.Leader)
	assert.Empty(t, changes, "the follower's knowledge is no transition")
}

// TestUnacknowledgedRenewalsEndTheTerm: a renewal the replica does not
// acknowledge does not move the leader's deadline (a failover could lose
// it), so a leader whose replica stops answering ends its term within
// TTL-TTL/5, and nobody leads until the replica answers again.
func TestUnacknowledgedRenewalsEndTheTerm(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, redistest.WithArgs("--repl-diskless-sync-delay", "0"))
	replica := redistest.Start(t, redistest.WithArgs("--replicaof", "127.0.0.1", portOf(t, master)))
	ctx := context.Background()
	mc := master.Client(t)
	require.Eventually(t, func() bool {
		info, err := mc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "state=online")
	}, redistest.HAWait, redistest.HATick, "the replica never synced")

	c := startContender(t, master.Addr(), "renew-ack", shortLease, blockUntilDone)
	require.Eventually(t, func() bool { return c.lease.State().Leader }, redistest.HAWait, redistest.HATick)
	first := c.lease.State().Token

	replica.Pause()
	start := time.Now()
	require.Eventually(t, func() bool { return !c.lease.State().Leader }, shortLease.TTL, time.Millisecond,
		"the leader kept its term on renewals the replica never acknowledged")
	assert.Less(t, time.Since(start), shortLease.TTL, "the term outlived the lease it had in Redis")
	assert.Never(t, func() bool { return c.lease.State().Leader }, shortLease.TTL/2, redistest.HATick,
		"an unacknowledged election led")
	assert.Contains(t, c.log.String(), "not acknowledged by every replica")

	replica.Resume()
	require.Eventually(t, func() bool { return c.lease.State().Leader }, redistest.HAWait, redistest.HATick, "no term once the replica answered")
	assert.Greater(t, c.lease.State().Token, first)
}

// TestLeaseOnARingElectsWithoutWaiting: a client that cannot be pinned to one
// master (a Ring) still elects, only without waiting for replicas.
func TestLeaseOnARingElectsWithoutWaiting(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": srv.Addr()}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = ring.Close() })
	f, err := New(ring, Config{Bot: "ring", ShardCount: 1, LeaseTTL: shortLease.TTL})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Lease().Run(ctx, blockUntilDone) }()
	require.Eventually(t, func() bool { return f.Lease().State().Leader }, redistest.HAWait, redistest.HATick)
	cancel()
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)
}

// portOf returns srv's port.
func portOf(t testing.TB, srv *redistest.Server) string {
	t.Helper()
	_, port, err := net.SplitHostPort(srv.Addr())
	require.NoError(t, err)
	return port
}

// TestTermDeadlineFollowsRenewalsAndFailsAtOnceAfterAPause: the leader's
// context carries a term valid until the acquisition's send time + TTL -
// TTL/5, moved by each renewal to its send time + TTL - TTL/5. When the clock
// jumps past the deadline (as after a pause: every timer due at once), the
// very next CheckTerm fails, without waiting for the lease's own timer to
// notice, and the leader's context is then already cancelled with cause
// ErrLeaseLost.
func TestTermDeadlineFollowsRenewalsAndFailsAtOnceAfterAPause(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	cfg := leaseConfig{TTL: time.Second, clock: fake} // renewals every 333 ms, margin 200 ms
	leaderCtx := make(chan context.Context, 1)
	c := startContender(t, srv.Addr(), "term1", cfg, func(ctx context.Context, tok int64) error {
		leaderCtx <- ctx
		return blockUntilDone(ctx, tok)
	})
	lctx := testkit.Recv(t, leaderCtx, "never led")
	require.NoError(t, CheckTerm(lctx))
	tm := clock.TermFrom(lctx)
	require.NotNil(t, tm, "the leader's context carries no term")
	left, ok := tm.Left()
	require.True(t, ok)
	assert.Equal(t, 800*time.Millisecond, left, "acquired at now: TTL - TTL/5 left")

	// The renewal at 333 ms moves the deadline to 333 ms + 800 ms.
	require.Eventually(t, func() bool { return fake.Timers() == 2 }, 5*time.Second, time.Millisecond,
		"the lease is not waiting on its renewal and loss timers")
	fake.Advance(cfg.TTL / 3)
	require.Eventually(t, func() bool { left, _ := tm.Left(); return left == 800*time.Millisecond }, 5*time.Second,
		time.Millisecond, "the renewal did not move the term's deadline")
	require.NoError(t, CheckTerm(lctx))
	require.True(t, c.lease.State().Leader)

	// A pause: the clock jumps past the deadline at once.
	fake.Advance(801 * time.Millisecond)
	require.ErrorIs(t, CheckTerm(lctx), ErrTermOver, "the first check after the pause passed")
	require.Error(t, lctx.Err(), "the failed check did not cancel the leader's context")
	assert.ErrorIs(t, context.Cause(lctx), ErrLeaseLost)
}

// TestTermEndsWithTheLeaderFunction: a straggler of the leader's work that
// checks after the function returned finds the term over, and outside a
// leader's context CheckTerm passes (one process always leads).
func TestTermEndsWithTheLeaderFunction(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	lease, err := newLease(newClient(t, srv.Addr()), "term2", shortLease)
	require.NoError(t, err)
	var kept context.Context
	err = lease.Run(context.Background(), func(ctx context.Context, _ int64) error {
		kept = ctx
		return CheckTerm(ctx)
	})
	require.NoError(t, err, "the term was over inside the leader function")
	require.ErrorIs(t, CheckTerm(kept), ErrTermOver, "a straggler passed its check after the function returned")
	require.NoError(t, CheckTerm(context.Background()))
}

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

// sentinelURL is the fleet's URL of s: every sentinel, the master's name.
func sentinelURL(s *redistest.Sentinel) string {
	a := s.SentinelAddrs()
	return "redis+sentinel://" + a[0] + "/0?master_name=" + redistest.MasterName + "&addr=" + strings.Join(a[1:], "&addr=")
}

// termLog records every term's token of several leases in the order they began.
type termLog = testkit.Log[int64]

// startHALease runs a lease of redistest.HABot on its own client of url (one process)
// that records each term in log and leads until stopped.
func startHALease(t *testing.T, url string, log *termLog) (*Lease, context.CancelFunc) {
	t.Helper()
	rdb, err := NewUniversalClient(url)
	require.NoError(t, err)
	lease, err := newLease(rdb, redistest.HABot, leaseConfig{TTL: redistest.HATTL, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- lease.Run(ctx, func(lctx context.Context, token int64) error {
			log.Add(token)
			<-lctx.Done()
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(redistest.HAWait):
			t.Error("Lease.Run did not return")
		}
		_ = rdb.Close()
	})
	return lease, cancel
}

// TestSentinelTokenSurvivesAFailoverRightAfterTheElection: the master is
// killed within moments of an election; the term's token was acknowledged by
// the replica before the term began, so the promoted replica holds it: the
// next term's token is above it, and the old term's fenced writes are
// refused on the new master.
func TestSentinelTokenSurvivesAFailoverRightAfterTheElection(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	url := sentinelURL(s)
	var log termLog
	a, stopA := startHALease(t, url, &log)
	require.Eventually(t, func() bool { return a.State().Leader }, redistest.HAWait, time.Millisecond)
	first := a.State().Token

	_, promoted := s.KillMaster(ctx) // right after the election
	pc := promoted.Client(t)
	counter, err := pc.Get(ctx, Key(redistest.HABot, "fence")).Int64()
	require.NoError(t, err, "the promoted replica lost the token counter")
	assert.GreaterOrEqual(t, counter, first, "the promoted replica lost the election's increment")

	stopA() // the next election is drawn on the promoted replica
	b, _ := startHALease(t, url, &log)
	require.Eventually(t, func() bool { return b.State().Leader }, redistest.HAWait, redistest.HATick, "no leader after the failover")
	second := b.State().Token
	assert.Greater(t, second, first, "a token repeated or went back across the failover")
	redistest.AssertIncreasing(t, log.All())
	require.ErrorIs(t, a.Fence(first).Set(ctx, pc, Key(redistest.HABot, "k"), "stale", 0), ErrFenced,
		"the old term wrote on the new master")
	require.NoError(t, b.Fence(second).Set(ctx, pc, Key(redistest.HABot, "k"), "new", 0))
}

// TestSentinelUnacknowledgedElectionLeadsNobody: while the connected
// replica acknowledges nothing (paused), elections are drawn on the master
// but given back, so nobody leads: a failover now could lose their tokens
// and hand the same one to a later term. Once the replica answers again, the
// next election leads, with a token above every one drawn.
func TestSentinelUnacknowledgedElectionLeadsNobody(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	url := sentinelURL(s)
	master, err := s.Master(ctx)
	require.NoError(t, err)
	replica := s.Other(master)
	mc := master.Client(t)
	var log termLog
	replica.Pause() // below down-after (1 s): the sentinels still count on it
	b, _ := startHALease(t, url, &log)
	require.Eventually(t, func() bool { return mc.Exists(ctx, Key(redistest.HABot, "fence")).Val() == 1 },
		redistest.HAWait, time.Millisecond, "no election was drawn while the replica was paused")
	assert.Never(t, func() bool { return b.State().Leader }, redistest.HATTL/4, redistest.HATick,
		"an election the replica did not acknowledge led")
	drawn, err := mc.Get(ctx, Key(redistest.HABot, "fence")).Int64()
	require.NoError(t, err)
	replica.Resume()

	require.Eventually(t, func() bool { return b.State().Leader }, redistest.HAWait, redistest.HATick, "no leader once the replica answered")
	// The attempt in flight at the resume may be acknowledged and lead with
	// the last token drawn: that election is then safe to use.
	assert.GreaterOrEqual(t, b.State().Token, drawn)
	assert.Len(t, log.All(), 1, "a given-back election ran a term")
}

// TestSentinelTokenStaysAboveALostElection: the replica is cut off (paused,
// its link killed), so the master has no replica to wait for and elects
// alone; then the master dies, and the cut-off replica is promoted without
// that election's increment. The next token still goes up: it is drawn from
// Redis's clock, which moved past the lost one during the failover.
func TestSentinelTokenStaysAboveALostElection(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	url := sentinelURL(s)
	var log termLog
	a, stopA := startHALease(t, url, &log)
	require.Eventually(t, func() bool { return a.State().Leader }, redistest.HAWait, redistest.HATick)
	stopA()
	require.Eventually(t, func() bool { return !a.State().Leader }, redistest.HAWait, redistest.HATick)

	master, err := s.Master(ctx)
	require.NoError(t, err)
	replica := s.Other(master)
	mc := master.Client(t)
	require.NoError(t, mc.Wait(ctx, 1, 5*time.Second).Err())
	replica.Pause()
	require.NoError(t, mc.ClientKillByFilter(ctx, "TYPE", "replica").Err())
	b, stopB := startHALease(t, url, &log)
	require.Eventually(t, func() bool { return b.State().Leader }, redistest.HAWait, redistest.HATick, "no election without a replica")
	lost := b.State().Token
	stopB() // no election on the promoted replica before the counter is read
	master.Kill()
	replica.Resume()
	s.WaitMaster(ctx, replica)
	kept, err := replica.Client(t).Get(ctx, Key(redistest.HABot, "fence")).Int64()
	require.NoError(t, err)
	require.Less(t, kept, lost, "the failover kept the election (else this test shows nothing)")

	c, _ := startHALease(t, url, &log)
	require.Eventually(t, func() bool { return c.State().Leader }, redistest.HAWait, redistest.HATick, "no leader after the failover")
	assert.Greater(t, c.State().Token, lost, "a token repeated or went back across the failover")
	redistest.AssertIncreasing(t, log.All())
}

// childEnv makes the test binary run childMain instead of the tests; the
// Redis address and bot come in childAddrEnv and childBotEnv.
const (
	childEnv     = "FLEET_TEST_CHILD"
	childAddrEnv = "FLEET_TEST_REDIS"
	childBotEnv  = "FLEET_TEST_BOT"
)

// fencedAppend appends ARGV[1] to the list KEYS[1] if the caller still leads.
var fencedAppend = fence.NewScript(`return redis.call('RPUSH', KEYS[1], ARGV[1])`)

// childMain is a leader process for the paused-leader test: it campaigns,
// and while it leads appends "child:<token>:<n>" to the shared list through
// the fence every 10 ms. When its leadership ends it tries one more fenced
// append (a straggling write, as a real job might make), prints the outcome
// ("after-loss fenced" or "after-loss wrote"), and exits.
func childMain(role string) int {
	if role != "paused-leader" {
		fmt.Fprintln(os.Stderr, "unknown child role", role)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(childAddrEnv), ContextTimeoutEnabled: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}}) // as fleet.NewUniversalClient does
	defer rdb.Close()
	bot := os.Getenv(childBotEnv)
	lease, err := newLease(rdb, bot, shortLease)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	list := Key(bot, "writes")
	err = lease.Run(ctx, func(lctx context.Context, token int64) error {
		defer cancel() // one term is the whole life of this process
		f := lease.Fence(token)
		fmt.Println("leader", token)
		for n := 0; lctx.Err() == nil; n++ {
			_, _ = fencedAppend.Run(context.Background(), rdb, f, []string{list}, fmt.Sprintf("child:%d:%d", token, n))
			select {
			case <-lctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
		_, err := fencedAppend.Run(context.Background(), rdb, f, []string{list}, fmt.Sprintf("child:%d:late", token))
		switch {
		case errors.Is(err, ErrFenced):
			fmt.Println("after-loss fenced")
		case err == nil:
			fmt.Println("after-loss wrote")
		default:
			fmt.Println("after-loss error", err)
		}
		return nil
	})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	return 0
}

func TestPausedLeaderWritesNothingAfterItResumes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const bot = "paused"
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=paused-leader", childAddrEnv+"="+srv.Addr(), childBotEnv+"="+bot)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	exited := make(chan struct{}) // closed once the child is reaped; then waitErr is set
	var waitErr error
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		httpx.Within("the killed child process to exit", func() {
			for range lines { // drain, so that Wait can finish
			}
			<-exited
		})
	})

	childToken := expectLine(t, lines, "leader ")
	ctx := context.Background()
	obs := srv.Client(t)
	list := Key(bot, "writes")
	require.Eventually(t, func() bool { return obs.LLen(ctx, list).Val() > 3 }, 5*time.Second, 5*time.Millisecond,
		"the child leader never wrote through the fence")

	// Pause the leader past its TTL; another process must win and write.
	require.NoError(t, cmd.Process.Signal(syscall.SIGSTOP))
	parent := startContender(t, srv.Addr(), bot, shortLease, func(lctx context.Context, tok int64) error {
		_, err := fencedAppend.Run(lctx, obs, Fence{}, []string{list}, "never") // the zero fence writes nothing
		assert.ErrorIs(t, err, ErrNoFence)
		return blockUntilDone(lctx, tok)
	})
	require.Eventually(t, func() bool { return parent.lease.State().Leader }, 3*shortLease.TTL, 5*time.Millisecond,
		"no takeover while the leader was stopped")
	parentToken := parent.lease.State().Token
	_, err = fencedAppend.Run(ctx, obs, parent.lease.Fence(parentToken), []string{list}, "parent")
	require.NoError(t, err)

	require.NoError(t, cmd.Process.Signal(syscall.SIGCONT))
	assert.Equal(t, "fenced", expectLine(t, lines, "after-loss "), "the resumed leader's late write was not refused")
	testkit.Recv(t, exited, "the resumed child did not exit")
	require.NoError(t, waitErr, "the child failed")

	writes, err := obs.LRange(ctx, list, 0, -1).Result()
	require.NoError(t, err)
	i := indexOf(writes, "parent")
	require.GreaterOrEqual(t, i, 0)
	assert.Empty(t, writes[i+1:], "writes landed after the new leader's: %v", writes[i+1:])
	assert.Greater(t, parentToken, mustInt(t, childToken))
}

func expectLine(t *testing.T, lines <-chan string, prefix string) string {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the child exited before printing %q", prefix)
			if rest, found := strings.CutPrefix(l, prefix); found {
				return rest
			}
			require.False(t, strings.HasPrefix(l, "error"), "child: %s", l)
		case <-timeout:
			t.Fatalf("the child did not print %q within 15s", prefix)
		}
	}
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func mustInt(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return n
}
