package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
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

// resumedRounds is how many times in a row the resumed-leader test pauses
// and resumes a leader; maxRounds bounds the attempts, as a round where the
// resumed process wins a new term at once proves nothing and is not counted.
const (
	resumedRounds = 20
	maxRounds     = 30
)

// printed counts the lines c printed starting with prefix read at or after
// since, and fails the test on a line that reports an error.
func printed(t *testing.T, c *testlog.Child, prefix string, since time.Time) int {
	for _, l := range c.Lines("error") {
		assert.Fail(t, c.Name+": error"+l.Text)
	}
	n := 0
	for _, l := range c.Lines(prefix) {
		if !l.At.Before(since) {
			n++
		}
	}
	return n
}

// request is one request a process sent, as a fake received it.
type request struct {
	what   string    // "topgg GET /path" or "discord PUT /path"
	sentAt time.Time // when it reached the sender's HTTP transport
}

// sent lists the requests the fakes received from process name: Top.gg's
// and Discord's REST.
func sent(tg *topggtest.Server, dc *discordtest.Server, name string) []request {
	var out []request
	add := func(h http.Header, what string) {
		if h.Get(senderHeader) == name {
			ns, _ := strconv.ParseInt(h.Get(sentAtHeader), 10, 64)
			out = append(out, request{what, time.Unix(0, ns)})
		}
	}
	for _, r := range tg.Requests() {
		add(r.Header, "topgg "+r.Method+" "+r.Path)
	}
	for _, c := range dc.Requests() {
		add(c.Header, "discord "+c.Method+" "+c.Path)
	}
	return out
}

// TestResumedLeaderActsNot runs a bot as three processes of a fleet (this
// test binary, one shard each, every job on: posts and polls every 100 ms,
// one handler call at a time, lease TTL 1 s) against one redis-server, the
// fake Top.gg and the fake Discord, which record who sent each request. In
// each round, three votes come in; the leader's reward handler gives the
// first voter a role and then waits on a gate file, and fails the second
// voter's first call: the leader is held with a handler call (the third
// vote's), a retry (the second's), a post and a poll due. The test stops
// the leader (SIGSTOP) and, once another process leads, opens the gate and
// resumes it (SIGCONT) with its deadline long past: from then on it sends no
// request of any kind, to Top.gg or Discord, while it has not won a new term
// (its handler returns, but the next call, the retry, the post and the poll
// all find the term over). The new leader rewards the round's voters. Twenty rounds
// in a row, alternating leaders.
func TestResumedLeaderActsNot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet of processes for about 30 s (not with -short)")
	}
	// Not parallel: the lease's 1 s TTL wants the CPU the other tests take.
	began := time.Now()
	srv := redistest.Start(t)
	const shards = 3
	var guilds []string
	for shard := range shards {
		guilds = append(guilds, discordtest.GuildIDForShard(0, shard, shards))
	}
	dc, err := discordtest.NewServer(discordtest.WithShardCount(shards), discordtest.WithGuilds(guilds...))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	project := topggtest.DiscordBot()
	project.PlatformID = dc.BotUserID()
	tg, err := topggtest.NewServer(topggtest.WithProject(project))
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	gates := t.TempDir()
	env := []string{childRedisEnv + "=" + srv.URL(), childTopggEnv + "=" + tg.URL, childTopggTokEnv + "=" + tg.Token(),
		childDiscordEnv + "=" + strings.TrimPrefix(dc.URL, "http://"), childDiscordTok + "=" + dc.Token(),
		childGatesEnv + "=" + gates, childGuildEnv + "=" + guilds[0]}
	procs := map[string]*testlog.Child{}
	for i := range shards {
		name := fmt.Sprintf("p%d", i)
		procs[name] = testlog.StartChild(t, name, "",
			append([]string{childEnv + "=" + name, fmt.Sprintf("%s=%d/%d", childShardEnv, i, shards)}, env...)...)
	}
	t.Cleanup(func() { // all stop at once, then each is waited for (and killed if it hangs)
		for _, c := range procs {
			_ = c.Signal(syscall.SIGCONT)
			_ = c.Signal(syscall.SIGTERM)
		}
		for _, c := range procs {
			if !c.Wait(15 * time.Second) {
				_ = c.Kill()
			}
			if t.Failed() {
				t.Log(c.Output())
			}
		}
	})
	until(t, procs, 30*time.Second, func() bool { return len(tg.Metrics()) > 0 }, "the fleet never posted its total")
	t.Logf("fleet up in %v", time.Since(began).Round(time.Millisecond))

	done := 0
	var window atomic.Int32 // requests in the window: checked before a stop, received after it
	for k := 1; done < resumedRounds; k++ {
		require.LessOrEqual(t, k, maxRounds, "only %d of %d rounds proved anything", done, resumedRounds)
		counts := resumedRound(t, k, tg, dc, procs, gates, &window)
		if t.Failed() {
			t.Fatalf("round %d failed (after %d good rounds)", k, done)
		}
		if counts {
			done++
		}
	}
	t.Logf("%d rounds in %v; %d request(s) in the window", done, time.Since(began).Round(time.Millisecond), window.Load())
}

// resumedRound runs round k (see TestResumedLeaderActsNot) and reports
// whether it counts: false when the resumed process won a new term within
// the round, which makes its requests allowed.
func resumedRound(t *testing.T, k int, tg *topggtest.Server, dc *discordtest.Server, procs map[string]*testlog.Child, gates string,
	window *atomic.Int32) bool {
	votes := roundVotes(k, 3)
	tg.AddVote(votes...)
	gate := gateOf(votes[0].PlatformID)
	var leader *testlog.Child
	until(t, procs, 10*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(gates, "entered-"+gate))
		leader = procs[string(b)]
		return err == nil && leader != nil
	}, "round %d: no leader called the reward handler", k)

	// The second vote's first call failed in the same leader: its retry
	// is due while the leader is stopped.
	until(t, procs, 10*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(gates, "failed-"+gate))
		return err == nil && string(b) == leader.Name
	}, "round %d: the leader's handler did not fail the second vote", k)
	stopped := time.Now()
	require.NoError(t, leader.Signal(syscall.SIGSTOP))
	until(t, procs, 10*time.Second, func() bool {
		for _, c := range procs {
			if c != leader && printed(t, c, "leader ", stopped) > 0 {
				return true
			}
		}
		return false
	}, "round %d: nobody took over from the stopped %s", k, leader.Name)
	took := time.Since(stopped)
	require.NoError(t, os.WriteFile(filepath.Join(gates, "open-"+gate), nil, 0o600))
	// Every 100 ms timer of the stopped leader (post, poll) is due by now,
	// and whatever it sent before the stop has reached the fakes.
	before := len(sent(tg, dc, leader.Name))

	resumed := time.Now()
	require.NoError(t, leader.Signal(syscall.SIGCONT))
	until(t, procs, 10*time.Second, func() bool { return printed(t, leader, "follower", resumed) > 0 },
		"round %d: the resumed %s never saw its term end", k, leader.Name)
	// What a resumed leader sends, it sends at once; give its jobs three of
	// their intervals all the same.
	time.Sleep(3 * childInterval)
	if printed(t, leader, "leader ", resumed) > 0 {
		t.Logf("round %d: %s won a new term right after it resumed; not counted", k, leader.Name)
		return false
	}
	var late []string
	for _, r := range sent(tg, dc, leader.Name)[before:] {
		if r.sentAt.After(resumed) {
			late = append(late, r.what)
			continue
		}
		// Handed to the transport before the stop (its check passed
		// then), written after: the window the fleet doc states.
		window.Add(1)
		t.Logf("round %d: %s's %s was in the window: checked before the stop, sent after", k, leader.Name, r.what)
	}
	assert.Empty(t, late, "round %d: %s sent requests after it resumed past its term", k, leader.Name)

	for _, v := range votes {
		until(t, procs, 10*time.Second, func() bool { return len(dc.MemberRoles(dcGuild(t, dc), v.PlatformID)) > 0 },
			"round %d: voter %s never rewarded by the new leader", k, v.PlatformID)
	}
	t.Logf("round %d: stopped %s; another process led %v later", k, leader.Name, took.Round(time.Millisecond))
	return true
}

// until waits for cond, checked every millisecond, at most timeout, and
// fails the test with msg if it is not met, or at once if a process of the
// fleet exited.
func until(t *testing.T, procs map[string]*testlog.Child, timeout time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		for _, c := range procs {
			if !c.Alive() {
				t.Fatalf("%s exited: "+msg, append([]any{c.Name}, args...)...)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: "+msg, append([]any{timeout}, args...)...)
		}
		time.Sleep(time.Millisecond)
	}
}

// dcGuild is the guild the children give roles in (the first shard's).
func dcGuild(t *testing.T, dc *discordtest.Server) string {
	t.Helper()
	return discordtest.GuildIDForShard(0, 0, dc.ShardCount())
}

// The resumed-leader test (resumed_leader_test.go) runs this test binary as
// the processes of a fleet: childEnv names the process (and turns TestMain
// into childMain); the rest of its settings come in the child* variables.
const (
	childEnv         = "PLUGIN_TEST_CHILD"
	childRedisEnv    = "PLUGIN_TEST_REDIS"
	childTopggEnv    = "PLUGIN_TEST_TOPGG" // base URL
	childTopggTokEnv = "PLUGIN_TEST_TOPGG_TOKEN"
	childDiscordEnv  = "PLUGIN_TEST_DISCORD" // host:port of the fake Discord
	childDiscordTok  = "PLUGIN_TEST_DISCORD_TOKEN"
	childShardEnv    = "PLUGIN_TEST_SHARD" // "id/count"
	childGatesEnv    = "PLUGIN_TEST_GATES" // the gate files' directory
	childGuildEnv    = "PLUGIN_TEST_GUILD"
)

// senderHeader names the process that sent a request, on every request a
// child makes to either fake, so that the test can tell who sent what;
// sentAtHeader is when the request reached the process's HTTP transport
// (Unix nanoseconds), after every check the library makes before it.
const (
	senderHeader = "X-Test-Sender"
	sentAtHeader = "X-Test-Sent-At"
)

// Timing of the fleet in the resumed-leader test: short, on loopback.
const (
	childLeaseTTL = fleet.MinLeaseTTL      // 1 s, the shortest a fleet takes
	childInterval = 100 * time.Millisecond // posts (refreshed each time) and polls
	// childRetryDelay is the reward handler's first retry delay: the retry
	// comes 150-300 ms after the failure (jittered).
	childRetryDelay = 300 * time.Millisecond
	rewardRole      = "900000000000000001"
)

// sender adds the senderHeader to every request, and, when addr is set,
// sends it to addr (the fake Discord) whatever the host (discordgo's
// endpoints are discord.com's).
type sender struct {
	name string
	addr string
	base http.RoundTripper
}

func (s sender) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Header.Set(senderHeader, s.name)
	out.Header.Set(sentAtHeader, strconv.FormatInt(time.Now().UnixNano(), 10))
	if s.addr != "" {
		out.URL.Scheme, out.URL.Host, out.Host = "http", s.addr, ""
	}
	return s.base.RoundTrip(out)
}

// childMain is one process of the fleet: a plugin with every job on, one
// shard, in fleet mode, two handler calls at a time. Its reward handler
// gives the voter a role through Discord. For the first vote of a round
// (roundVotes) it then waits until the gate file of the round is there
// (gateOf), having written "entered-<gate>" with its name; the second vote's
// first call fails at once, having written "failed-<gate>", so that its
// retry comes 150-300 ms later; the third waits for a free slot. A leader
// stopped then has a handler call, a retry, a post and a poll due. It prints "leader <token>" and "follower" on stdout at each change
// of its leadership, and runs until SIGTERM.
func childMain(name string) int {
	if err := runChild(name); err != nil {
		fmt.Println("error", err)
		return 1
	}
	return 0
}

func runChild(name string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("process", name)
	var shard, shards int
	if _, err := fmt.Sscanf(os.Getenv(childShardEnv), "%d/%d", &shard, &shards); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	client, err := topgg.New(os.Getenv(childTopggTokEnv), topgg.WithBaseURL(os.Getenv(childTopggEnv)),
		topgg.WithHTTPClient(&http.Client{Transport: sender{name: name, base: http.DefaultTransport}}),
		topgg.WithRetryPolicy(topgg.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}))
	if err != nil {
		return err
	}
	sess, err := childSession(name, shard, shards)
	if err != nil {
		return err
	}
	rdb, err := fleet.NewUniversalClient(os.Getenv(childRedisEnv))
	if err != nil {
		return err
	}
	defer rdb.Close()
	f, err := fleet.New(rdb, fleet.Config{Bot: "app1", ShardCount: shards, LeaseTTL: childLeaseTTL,
		ReportEvery: 100 * time.Millisecond, Logger: log})
	if err != nil {
		return err
	}
	state, err := redisstate.New(rdb, "app1")
	if err != nil {
		return err
	}
	gates := os.Getenv(childGatesEnv)
	cfg := plugin.Config{
		Autopost: "v1", AutopostInterval: childInterval, AutopostRefresh: childInterval,
		SyncCommands: new(true), VotePollInterval: new(childInterval), VoteLookback: 13 * time.Hour,
		VoteConcurrency: 2, VoteRetryDelay: childRetryDelay,
	}
	p, err := plugin.New(client, cfg, plugin.WithFleet(f), plugin.WithState(state), plugin.WithLogger(log),
		plugin.WithRewardHandler(childReward(name, sess, gates, os.Getenv(childGuildEnv))),
		plugin.WithCommands([]*discordgo.ApplicationCommand{{Name: "vote", Description: "Vote"}}))
	if err != nil {
		return err
	}
	if err := p.Attach(sess); err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { tellLeadership(ctx, f.Lease()) })
	runErr := make(chan error, 1)
	wg.Go(func() { runErr <- p.Run(ctx) })
	if err := sess.Open(); err != nil {
		stop()
		wg.Wait()
		return errors.Join(err, <-runErr)
	}
	wg.Wait()
	return errors.Join(<-runErr, sess.Close())
}

// childSession returns the shard's session, its requests sent to the fake
// Discord and marked with the process's name.
func childSession(name string, shard, shards int) (*discordgo.Session, error) {
	sess, err := discordgo.New("Bot " + os.Getenv(childDiscordTok))
	if err != nil {
		return nil, err
	}
	sess.Client = &http.Client{Transport: sender{name: name, addr: os.Getenv(childDiscordEnv), base: http.DefaultTransport},
		Timeout: 10 * time.Second}
	sess.ShardID, sess.ShardCount = shard, shards
	sess.Identify.Shard = &[2]int{shard, shards}
	sess.Identify.Intents = discordgo.IntentsGuilds
	sess.ShouldReconnectOnError = false
	return sess, nil
}

// childReward is the reward handler of childMain.
func childReward(name string, sess *discordgo.Session, gates, guild string) voterewards.Handler {
	var failedOnce sync.Map // votes whose first call in this process failed
	return func(ctx context.Context, v voterewards.Vote) error {
		gate := gateOf(v.PlatformID)
		if roundVote(v.PlatformID) == 1 {
			if _, failed := failedOnce.LoadOrStore(v.Key(), true); !failed {
				// Fails once: its retry comes VoteRetryDelay later, while
				// the test holds this process stopped.
				if err := os.WriteFile(filepath.Join(gates, "failed-"+gate), []byte(name), 0o600); err != nil {
					return err
				}
				return errors.New("not now; try again")
			}
		}
		if err := sess.GuildMemberRoleAdd(guild, v.PlatformID, rewardRole, discordgo.WithContext(ctx)); err != nil {
			return err
		}
		if roundVote(v.PlatformID) != 0 {
			return nil
		}
		// The round's first vote holds its handler until the gate opens.
		if err := os.WriteFile(filepath.Join(gates, "entered-"+gate), []byte(name), 0o600); err != nil {
			return err
		}
		for {
			if _, err := os.Stat(filepath.Join(gates, "open-"+gate)); err == nil {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(2 * time.Millisecond):
			}
		}
	}
}

// tellLeadership prints each change of l's leadership until ctx is done.
func tellLeadership(ctx context.Context, l *fleet.Lease) {
	var last int64 = -1
	for ctx.Err() == nil {
		if s := l.State(); s.Token != last {
			last = s.Token
			if s.Leader {
				fmt.Println("leader", strconv.FormatInt(s.Token, 10))
			} else {
				fmt.Println("follower")
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Millisecond):
		}
	}
}

// roundVote returns the index of a vote in its round (roundVotes).
func roundVote(platformID string) int { return int(platformID[len(platformID)-1] - '0') }

// gateOf returns the round of a vote: the first 4 digits of its voter's id
// (roundVotes).
func gateOf(platformID string) string { return platformID[:4] }

// roundVotes returns n votes of round k, created now: their voters' ids
// start with "9" and k on 3 digits.
func roundVotes(k, n int) []topggtest.Vote {
	now := time.Now().UTC()
	out := make([]topggtest.Vote, n)
	for i := range out {
		out[i] = topggtest.Vote{UserID: fmt.Sprintf("8%03d%014d", k, i), PlatformID: fmt.Sprintf("9%03d%014d", k, i),
			Weight: 1, CreatedAt: now, ExpiresAt: now.Add(12 * time.Hour)}
	}
	return out
}
