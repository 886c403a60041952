package fleet

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// sentinelURL is the fleet's URL of s: every sentinel, the master's name.
func sentinelURL(s *redistest.Sentinel) string {
	a := s.SentinelAddrs()
	return "redis+sentinel://" + a[0] + "/0?master_name=" + redistest.MasterName + "&addr=" + strings.Join(a[1:], "&addr=")
}

// termLog records every term of several leases in the order they began.
type termLog struct {
	mu     sync.Mutex
	tokens []int64
}

func (l *termLog) add(token int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tokens = append(l.tokens, token)
}

func (l *termLog) all() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.tokens...)
}

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
			log.add(token)
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
	redistest.AssertIncreasing(t, log.all())
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
	assert.Len(t, log.all(), 1, "a given-back election ran a term")
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
	redistest.AssertIncreasing(t, log.all())
}
