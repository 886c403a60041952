package fleet

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// fleetProcess is one simulated process: its own Redis client, its own
// Counter of its own shards' sessions, and a reporter publishing them.
type fleetProcess struct {
	counter  *autopost.Counter
	counts   *shardCounts
	sessions []*discordgo.Session
}

// startProcess attaches sessions for shards to a new Counter and runs a
// reporter for it until the test ends. The sessions are not opened.
func startProcess(t *testing.T, addr string, dc *discordtest.Server, shardCount int, shards ...int) *fleetProcess {
	t.Helper()
	p := &fleetProcess{counter: autopost.NewCounter(shardCount)}
	var err error
	p.counts, err = newShardCounts(newClient(t, addr), "bot", shardCount, countsConfig{})
	require.NoError(t, err)
	for _, id := range shards {
		s, err := dc.NewSession(id, shardCount)
		require.NoError(t, err)
		p.sessions = append(p.sessions, s)
	}
	_, err = p.counter.Attach(p.sessions...)
	require.NoError(t, err)
	// A period of an hour: the shards must be published when they get READY.
	rep, err := newCounterReporter(p.counts, p.counter, reporterConfig{Every: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rep.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		httpx.Within("the reporter's Run to return", func() { assert.NoError(t, <-done) })
		var wg sync.WaitGroup
		for _, s := range p.sessions {
			wg.Go(func() { _ = s.Close() })
		}
		httpx.Within("the sessions' Close", wg.Wait)
	})
	return p
}

func (p *fleetProcess) open(t *testing.T) {
	t.Helper()
	for _, s := range p.sessions {
		require.NoError(t, s.Open())
	}
}

// TestLeaderPosterPostsTheFleetTotal runs two processes of a 4-shard bot
// (shards 0-1 and 2-3, 3 and 5 guilds per shard) that publish their
// Counters, and the first one's Poster on the fleet totalSource: nothing is
// posted while the second process's shards have not reported, then the exact
// total with shard_count 4.
func TestLeaderPosterPostsTheFleetTotal(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const shardCount = 4
	dc := testkit.Discord(t, []int{3, 3, 5, 5})
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	client, err := tg.NewClient()
	require.NoError(t, err)

	a := startProcess(t, srv.Addr(), dc, shardCount, 0, 1)
	b := startProcess(t, srv.Addr(), dc, shardCount, 2, 3)
	src, err := newTotalSource(a.counts, a.counter)
	require.NoError(t, err)
	poster, err := autopost.New(client, autopost.Config{Source: src, Interval: 1600 * time.Millisecond}) // rechecks every 100 ms
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- poster.Run(ctx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })

	a.open(t)
	require.Eventually(t, func() bool {
		c, err := src.Counts(ctx)
		return err == nil && c.Servers == 6 && assert.ObjectsAreEqual([]int{2, 3}, c.Missing)
	}, 5*time.Second, 5*time.Millisecond, "process a's shards never published")
	c, err := src.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, shardCount, c.Shards)
	assert.Equal(t, []int{3, 3, 0, 0}, c.PerShard)
	assert.Equal(t, dc.BotUserID(), c.BotID)
	assert.Empty(t, tg.Metrics(), "posted a partial total")

	b.open(t)
	require.Eventually(t, func() bool { return len(tg.Metrics()) > 0 }, 10*time.Second, 5*time.Millisecond,
		"the fleet total was never posted")
	m := tg.Metrics()[0]
	assert.Equal(t, map[string]int{"server_count": 16, "shard_count": shardCount}, m.Metrics)
	c, err = src.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 3, 5, 5}, c.PerShard)
	assert.Empty(t, c.Missing)
}

func TestSourceAndCounterReporterMisuse(t *testing.T) {
	t.Parallel()
	counts, err := newShardCounts(newClient(t, "127.0.0.1:1"), "bot", 1, countsConfig{})
	require.NoError(t, err)
	_, err = newTotalSource(counts, nil)
	require.ErrorAs(t, err, new(*topgg.ConfigError))
	_, err = newCounterReporter(counts, nil, reporterConfig{})
	require.ErrorAs(t, err, new(*topgg.ConfigError))
}

// TestPrintingTheFleetWhileItCountsIsSafe: fmt of the count source
// Fleet.Counts returns walked its *autopost.Counter unlocked while sessions
// were attached (a data race, under -race); the Fleet and its Lease print by
// name too, showing no token.
func TestPrintingTheFleetWhileItCountsIsSafe(t *testing.T) {
	t.Parallel()
	f, err := New(newClient(t, "127.0.0.1:1"), Config{Bot: "bot", ShardCount: 2})
	require.NoError(t, err)
	counter := autopost.NewCounter(2)
	total, _, err := f.Counts(counter)
	require.NoError(t, err)
	const token = "Bot c2VjcmV0LXRva2Vu.printed"
	out := testlog.PrintWhile(func() {
		for range 200 {
			s, err := discordgo.New(token)
			if !assert.NoError(t, err) {
				return
			}
			s.ShardID, s.ShardCount, s.Identify.Intents = 1, 2, discordgo.IntentsGuilds
			detach, err := counter.Attach(s)
			if assert.NoError(t, err) {
				detach()
			}
		}
	}, total, f, f.Lease())
	assert.NotContains(t, out, "c2VjcmV0LXRva2Vu")
	assert.Contains(t, out, "fleet.Counts(total)")
}
