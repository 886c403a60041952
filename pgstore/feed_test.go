package pgstore_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/voterewards"
)

// follow runs s.Follow until the test ends, reporting votes and resyncs.
func follow(t *testing.T, s *pgstore.Store) (got chan voterewards.Vote, resyncs chan struct{}) {
	t.Helper()
	got, resyncs = make(chan voterewards.Vote, 1024), make(chan struct{}, 16)
	untilCleanup(t, "Follow", func(ctx context.Context) error {
		return s.Follow(ctx, func(v voterewards.Vote) { got <- v }, func() { resyncs <- struct{}{} })
	})
	return got, resyncs
}

func receive[T any](t *testing.T, ch <-chan T, within time.Duration, msg string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		require.FailNow(t, msg)
		panic("unreachable")
	}
}

// TestFeedAcrossProcesses: votes one process adds reach another process's
// Follow (two pools, as two processes have), with their Stats, in order.
// The 100 ms is asserted (median and 90th percentile, up to
// Active) by TestActiveLearnsVotesWithin100ms and measured by
// BenchmarkFeedLatency; here each vote must arrive within a second, a bound
// a loaded machine keeps.
func TestFeedAcrossProcesses(t *testing.T) {
	dbURL := pg.URL(t)
	ctx := context.Background()
	writer, err := pgstore.Open(ctx, openPool(t, dbURL), pgstore.Config{})
	require.NoError(t, err)
	reader, err := pgstore.Open(ctx, openPool(t, dbURL), pgstore.Config{})
	require.NoError(t, err)
	got, resyncs := follow(t, reader)
	receive(t, resyncs, 10*time.Second, "Follow did not resync once listening")

	for i := range 20 {
		v := vote(i%3, base.Add(time.Duration(i)*voterewards.VoteLifetime))
		added := ingest(t, writer, nil, v, v)
		require.Len(t, added, 1)
		start := time.Now()
		g := receive(t, got, time.Second, "the vote did not reach the other process within a second")
		t.Logf("vote %d: %s", i, time.Since(start))
		assert.Equal(t, v.Key(), g.Key())
		assert.Equal(t, added[0].Stats, g.Stats, "with its Stats")
	}
	assert.Empty(t, got, "each vote once")
}

// TestFeedLongKeysFitPayloads: keys as long as voterewards lets ids be,
// escaped six bytes a byte in JSON, between short ones, reach Follow: no
// NOTIFY payload passes PostgreSQL's 8000 bytes.
func TestFeedLongKeysFitPayloads(t *testing.T) {
	s := open(t, pgstore.Config{})
	pgstore.SetFollowCheck(s, time.Hour) // a lost notification is not made up for
	got, resyncs := follow(t, s)
	receive(t, resyncs, 10*time.Second, "Follow did not resync once listening")
	var votes []voterewards.Vote
	for i := range 300 {
		v := vote(i, base)
		if i%100 == 1 {
			v.PlatformID = strings.Repeat("\x01", 1021) + strconv.Itoa(i)
		}
		votes = append(votes, v)
	}
	require.Equal(t, len(votes), len(ingest(t, s, nil, votes...)))
	for i, v := range votes {
		g := receive(t, got, 5*time.Second, "a vote of the batch is missing")
		require.True(t, v.Key() == g.Key(), "vote %d", i)
	}
}

// TestFeedManyVotesSplitsPayloads: one Ingest of more votes than one NOTIFY
// payload holds reaches Follow whole and in order.
func TestFeedManyVotesSplitsPayloads(t *testing.T) {
	s := open(t, pgstore.Config{})
	got, resyncs := follow(t, s)
	receive(t, resyncs, 10*time.Second, "Follow did not resync once listening")
	var votes []voterewards.Vote
	for i := range 600 { // about 50 bytes a key: 30 KB of keys
		votes = append(votes, vote(i, base.Add(time.Duration(i)*time.Millisecond)))
	}
	require.Len(t, ingest(t, s, nil, votes...), len(votes))
	for i, v := range votes {
		g := receive(t, got, 5*time.Second, "a vote of the batch is missing")
		require.Equal(t, v.Key(), g.Key(), "vote %d", i)
	}
}

// TestFeedResyncsAfterReconnect: when Follow's connection dies, it
// reconnects, resyncs, and reports the votes added after.
func TestFeedResyncsAfterReconnect(t *testing.T) {
	ctx := context.Background()
	s, pool := openPooled(t)
	got, resyncs := follow(t, s)
	receive(t, resyncs, 10*time.Second, "Follow did not resync once listening")
	var killed int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN%'`).Scan(&killed))
	require.Equal(t, 1, killed, "the feed's connection")
	receive(t, resyncs, 10*time.Second, "Follow did not resync after reconnecting")
	v := vote(1, base)
	ingest(t, s, nil, v)
	assert.Equal(t, v.Key(), receive(t, got, 5*time.Second, "no vote after the reconnect").Key())
}

// TestFeedResyncsAfterALostNotification: a vote committed whose
// notification never came (its process died between the two) makes another
// process's Follow resync within a few checks; notified votes never do.
func TestFeedResyncsAfterALostNotification(t *testing.T) {
	dbURL := pg.URL(t)
	stores := make([]*pgstore.Store, 3)
	for i := range stores {
		s, err := pgstore.Open(context.Background(), openPool(t, dbURL), pgstore.Config{})
		require.NoError(t, err)
		stores[i] = s
	}
	writer, lost, reader := stores[0], stores[1], stores[2]
	pgstore.LoseNotifications(lost)
	pgstore.SetFollowCheck(reader, 20*time.Millisecond)
	got, resyncs := follow(t, reader)
	receive(t, resyncs, 10*time.Second, "Follow did not resync once listening")

	v := vote(1, base)
	ingest(t, writer, nil, v)
	assert.Equal(t, v.Key(), receive(t, got, 5*time.Second, "the notified vote did not arrive").Key())
	assert.Never(t, func() bool { return len(resyncs) > 0 }, 500*time.Millisecond, 10*time.Millisecond,
		"Follow resynced though no notification was lost")

	ingest(t, lost, nil, vote(2, base))
	receive(t, resyncs, 5*time.Second, "Follow did not resync after a lost notification")
	assert.Empty(t, got, "the lost vote comes by the resync")
}

// TestFollowMisuse: nil callbacks are an error, not a panic.
func TestFollowMisuse(t *testing.T) {
	s := open(t, pgstore.Config{})
	assert.Error(t, s.Follow(context.Background(), nil, func() {}))
	assert.Error(t, s.Follow(context.Background(), func(voterewards.Vote) {}, nil))
}

// Feed latency test figures: the goal, how many deliveries are
// measured, and the bound past which one counts as lost.
const (
	feedGoal       = 100 * time.Millisecond
	feedDeliveries = 200
	feedLost       = 5 * time.Second
)

// TestActiveLearnsVotesWithin100ms measures the promise end to end:
// a vote one process ingests (its own pool) is known to another process's
// Poller.Active (a follower: Poller.Mirror on the store's LISTEN/NOTIFY feed)
// within 100 ms. It measures 200 votes, one at a time, from the return of
// the writer's Ingest to the first Active that knows the vote (checked every
// millisecond), and asserts the goal for the median and the 90th
// percentile, logging the distribution. A percentile, not every vote: on a
// loaded machine a single delivery can wait for the scheduler or the disk
// (the worst seen here is 129 ms over thousands, the median under a
// millisecond), but for the 90th percentile to miss, 20 separate stalls of
// more than 100 ms would have to hit this test's few seconds, each landing on
// a delivery. Every vote must arrive within 5 s (none lost).
func TestActiveLearnsVotesWithin100ms(t *testing.T) {
	if testing.Short() {
		t.Skip("measures 200 deliveries")
	}
	ctx := context.Background()
	dbURL := pg.URL(t)
	writer, err := pgstore.Open(ctx, openPool(t, dbURL), pgstore.Config{})
	require.NoError(t, err)
	reader, err := pgstore.Open(ctx, openPool(t, dbURL), pgstore.Config{})
	require.NoError(t, err)
	follower := mirror(t, reader)

	at := time.Now().Add(-time.Minute)
	warm := vote(0, at)
	ingest(t, writer, nil, warm)
	require.Eventually(t, func() bool { return follower.Active(warm.PlatformID).Active }, 10*time.Second, time.Millisecond,
		"the follower's Mirror never learned a vote")

	lat := make([]time.Duration, 0, feedDeliveries)
	for i := 1; i <= feedDeliveries; i++ {
		v := vote(i, at.Add(time.Duration(i)*time.Millisecond))
		ingest(t, writer, nil, v)
		lat = append(lat, awaitActive(t, follower, v.PlatformID))
	}
	slices.Sort(lat)
	pct := func(p int) time.Duration { return lat[(len(lat)-1)*p/100] }
	within := 0
	for _, d := range lat {
		if d <= feedGoal {
			within++
		}
	}
	t.Logf("Ingest return -> the other process's Active, %d votes: p50 %v, p90 %v, p99 %v, max %v; %d within %v",
		len(lat), pct(50), pct(90), pct(99), lat[len(lat)-1], within, feedGoal)
	assert.LessOrEqual(t, pct(50), feedGoal, "median delivery slower than the issue's goal")
	assert.LessOrEqual(t, pct(90), feedGoal, "90th percentile delivery slower than the issue's goal")
}

// mirror runs a follower's Poller (Mirror only: no Run, no request) on s
// until the test ends.
func mirror(t *testing.T, s *pgstore.Store) *voterewards.Poller {
	t.Helper()
	_, client := fakeTopgg(t)
	p, err := voterewards.New(client, voterewards.Config{Store: s,
		OnReward: func(context.Context, voterewards.Vote) error { return nil }}) // a follower calls none
	require.NoError(t, err)
	untilCleanup(t, "Mirror", p.Mirror)
	return p
}

// awaitActive returns how long it took p.Active to know id, checking every
// millisecond; it fails the test past feedLost.
func awaitActive(t *testing.T, p *voterewards.Poller, id string) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !p.Active(id).Active {
		if time.Since(start) > feedLost {
			require.FailNow(t, "a vote never reached the other process's Active", "%s after %v", id, feedLost)
		}
		<-tick.C
	}
	return time.Since(start)
}
