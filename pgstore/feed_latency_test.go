package pgstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

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
	srv, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	client, err := srv.NewClient()
	require.NoError(t, err)
	p, err := voterewards.New(client, voterewards.Config{Store: s,
		OnReward: func(context.Context, voterewards.Vote) error { return nil }}) // a follower calls none
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Mirror(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("Mirror did not return after its context ended")
		}
	})
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
