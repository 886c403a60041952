package plugin_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// newFleet makes one process's view of a fleet on the Redis at url: its own
// client, closed at the end of the test, with the fleet of cfg and the bot's
// Redis state on it.
func newFleet(t *testing.T, url string, cfg fleet.Config) (*fleet.Fleet, *redisstate.State) {
	t.Helper()
	rdb, err := fleet.NewUniversalClient(url)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, rdb.Close()) })
	f, err := fleet.New(rdb, cfg)
	require.NoError(t, err)
	st, err := redisstate.New(rdb, cfg.Bot)
	require.NoError(t, err)
	return f, st
}

// fleetProcess makes one process of a fleet: its own Redis client, fleet and
// state (newFleet), a plugin in fleet mode attached to the given shards'
// sessions.
func (w *world) fleetProcess(url string, cfg plugin.Config, shards []int, opts ...plugin.Option) (*plugin.Plugin, *fleet.Fleet, *redisstate.State) {
	w.t.Helper()
	f, st := newFleet(w.t, url, fleet.Config{Bot: "app1", ShardCount: w.shards, LeaseTTL: time.Second,
		ReportEvery: 100 * time.Millisecond})
	p, err := plugin.New(w.client, cfg, append([]plugin.Option{plugin.WithLogger(slog.New(slog.DiscardHandler)),
		plugin.WithFleet(f), plugin.WithState(st),
		plugin.WithCommands([]*discordgo.ApplicationCommand{{Name: "vote", Description: "Vote"}})}, opts...)...)
	require.NoError(w.t, err)
	var ss []*discordgo.Session
	for _, i := range shards {
		ss = append(ss, w.sessions[i])
	}
	require.NoError(w.t, p.Attach(ss...))
	return p, f, st
}

// TestFleetModeLeaderPostsTheExactTotalAndHandsOver runs a 4-shard bot as two
// plugin processes (shards 0-1 and 2-3) sharing one redis-server: nothing is
// posted until every shard reported, then only the exact total with
// shard_count 4, by one leader; the commands are published once. When the
// leader stops, the other process takes over, its shards still count, and
// it does not publish the unchanged commands again (the hash is in Redis).
func TestFleetModeLeaderPostsTheExactTotalAndHandsOver(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := newWorld(t, worldSpec{shards: 4, perShard: 2})
	cfg := w.config()
	cfg.AutopostInterval = 400 * time.Millisecond // the fleet Source is read again every 25 ms until complete
	cfg.VotePollInterval = new(time.Duration(0))
	a, fa, sa := w.fleetProcess(srv.URL(), cfg, []int{0, 1})
	b, fb, _ := w.fleetProcess(srv.URL(), cfg, []int{2, 3})
	w.start(a)
	w.start(b)

	w.open(0, 1)
	require.Eventually(t, func() bool { return fa.Lease().State().Leader || fb.Lease().State().Leader }, wait, tick)
	ctx := w.ctx()
	total, _, err := fa.Counts(autopost.NewCounter(0)) // the fleet's total, as the leader reads it
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		tot, err := total.Counts(ctx)
		return err == nil && tot.Servers == 4
	}, wait, tick, "process a never published its shards")
	assert.Empty(t, w.tg.Metrics(), "posted while shards 2-3 had not reported")

	w.open(2, 3)
	require.Eventually(t, func() bool { return len(w.tg.Metrics()) > 0 }, wait, tick, "the fleet total was never posted")
	for _, m := range w.tg.Metrics() {
		assert.Equal(t, map[string]int{"server_count": 8, "shard_count": 4}, m.Metrics)
	}
	w.requirePublished([]*discordgo.ApplicationCommand{{Name: "vote", Description: "Vote"}})
	// The leader records the hash after the PUT: wait for the record, which
	// is what spares the next leader a second PUT, before stopping it.
	require.Eventually(t, func() bool {
		h, err := sa.LoadHash(ctx)
		return err == nil && h != ""
	}, wait, tick, "the command hash was never saved")

	leader, ff := a, fb
	if fb.Lease().State().Leader {
		leader, ff = b, fa
	}
	// The old leader posts nothing more (unchanged numbers are not posted
	// again); the new leader's first Run posts at once.
	posted := len(w.tg.Metrics())
	require.NoError(t, w.stop(leader))
	require.Eventually(t, func() bool { return ff.Lease().State().Leader }, wait, tick, "the follower never took over")
	require.Eventually(t, func() bool { return len(w.tg.Metrics()) > posted }, wait, tick, "the new leader never posted")
	for _, m := range w.tg.Metrics() {
		assert.Equal(t, map[string]int{"server_count": 8, "shard_count": 4}, m.Metrics,
			"the stopped process's shards must still count")
	}
	assert.Equal(t, 1, w.count(http.MethodPut, commandsPath), "unchanged commands published again by the new leader")
}

// TestFleetModeVotesDeliveredOnceAndActiveEverywhere: two processes share
// the state in Redis; only the leader polls and delivers, so each vote
// is rewarded once, and both processes' Active know every vote.
func TestFleetModeVotesDeliveredOnceAndActiveEverywhere(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := newWorld(t, worldSpec{shards: 2, perShard: 1})
	vs := votes(20)
	w.tg.AddVote(vs...)
	rec := newRecorder()
	cfg := w.config()
	a, _, _ := w.fleetProcess(srv.URL(), cfg, []int{0}, plugin.WithRewardHandler(rec.handle))
	b, _, _ := w.fleetProcess(srv.URL(), cfg, []int{1}, plugin.WithRewardHandler(rec.handle))
	w.start(a)
	w.start(b)
	w.open()
	require.Eventually(t, func() bool { return rec.distinct() == len(vs) }, wait, tick, "not every vote was rewarded")
	w.waitPolls(3)
	assert.Equal(t, len(vs), rec.total(), "a vote rewarded twice")
	for _, v := range vs {
		for _, p := range []*plugin.Plugin{a, b} {
			assert.Eventually(t, func() bool { return p.Active(v.PlatformID).Active }, wait, tick)
		}
	}
}

func TestWithFleetNil(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	_, err := plugin.New(w.client, w.config(), plugin.WithFleet(nil))
	require.ErrorIs(t, err, topgg.ErrNilArgument)
}

// TestFleetModeReadiness: a fleet process checks its state in Redis
// ("state") and whether leadership is known ("leadership"), and nothing of a
// state directory it does not use.
func TestFleetModeReadiness(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	f, st := newFleet(t, "redis://127.0.0.1:1/0", fleet.Config{Bot: "app1", ShardCount: 1})
	p, err := plugin.New(w.client, w.config(), plugin.WithFleet(f), plugin.WithState(st), plugin.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	var names []string
	for _, c := range p.ReadinessChecks() {
		names = append(names, c.Name)
		if c.Name == "state" {
			assert.Error(t, c.Func(w.ctx()), "nothing listens on 127.0.0.1:1")
		}
		if c.Name == "leadership" {
			assert.ErrorIs(t, c.Func(w.ctx()), fleet.ErrLeadershipUnknown, "not running: leadership unknown")
		}
	}
	assert.Equal(t, []string{"running", "shards", "token", "state", "leadership"}, names)
}

// TestFleetNeedsASharedState: New hands the fleet's fence to the state: a
// Redis state takes it; a state one process holds (a directory, memory) is
// refused with voterewards.ErrNotShared, and a Redis state without a fleet
// with voterewards.ErrNeedsFence (its leader writes would have no term).
func TestFleetNeedsASharedState(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	quiet := plugin.WithLogger(slog.New(slog.DiscardHandler))
	f, st := newFleet(t, "redis://127.0.0.1:1/0", fleet.Config{Bot: "app1", ShardCount: 1})
	_, err := plugin.New(w.client, w.config(), quiet, plugin.WithFleet(f), plugin.WithState(st))
	require.NoError(t, err, "a fleet on its Redis state")

	for name, one := range map[string]voterewards.State{"directory": w.state(), "memory": voterewards.NewMemoryStore()} {
		_, err := plugin.New(w.client, w.config(), quiet, plugin.WithFleet(f), plugin.WithState(one))
		require.ErrorIs(t, err, voterewards.ErrNotShared, name)
	}

	_, alone := newFleet(t, "redis://127.0.0.1:1/0", fleet.Config{Bot: "app1", ShardCount: 1})
	_, err = plugin.New(w.client, w.config(), quiet, plugin.WithState(alone))
	require.ErrorIs(t, err, voterewards.ErrNeedsFence, "a Redis state without a fleet")
}

// TestFleetModeRefusedTokenEndsRun: in a fleet, a token the service refuses
// ends the leader's jobs and Run, once, with ErrJobFailed wrapping
// topgg.ErrUnauthorized (the leader job passes it through, not wrapped again).
func TestFleetModeRefusedTokenEndsRun(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := newWorld(t, worldSpec{})
	bad, err := topgg.New("not-the-token", topgg.WithBaseURL(w.tg.URL), topgg.WithHTTPClient(w.tg.Client()))
	require.NoError(t, err)
	f, st := newFleet(t, srv.URL(), fleet.Config{Bot: "app1", ShardCount: 1, LeaseTTL: time.Second})
	cfg := w.config()
	cfg.Autopost, cfg.VotePollInterval = "off", new(time.Duration(0))
	p, err := plugin.New(bad, cfg, plugin.WithFleet(f), plugin.WithState(st), plugin.WithCommands(botCommands()),
		plugin.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	require.NoError(t, p.Attach(w.sessions...))
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background()) }()
	w.open()
	select {
	case err := <-done:
		require.ErrorIs(t, err, plugin.ErrJobFailed)
		require.ErrorIs(t, err, topgg.ErrUnauthorized)
		assert.Equal(t, 1, strings.Count(err.Error(), plugin.ErrJobFailed.Error()), "wrapped twice: %v", err)
		assert.NotContains(t, err.Error(), "not-the-token")
	case <-time.After(wait):
		t.Fatal("Run goes on with a refused token")
	}
}
