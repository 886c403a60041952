package voterperks_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// fleetBot makes process i of a fleet of len(w.guilds) processes on the
// redis-server at url: its own Redis client, with the fleet and the state on
// it, and the plugin in fleet mode on the session of shard i.
func (w *world) fleetBot(url string, cfg plugin.Config, i int) (*plugin.Plugin, *fleet.Fleet, *redisstate.State) {
	w.t.Helper()
	rdb, err := fleet.NewUniversalClient(url)
	require.NoError(w.t, err)
	w.t.Cleanup(func() { assert.NoError(w.t, rdb.Close()) })
	f, err := fleet.New(rdb, fleet.Config{Bot: w.dc.ApplicationID(), ShardCount: len(w.guilds), LeaseTTL: time.Second})
	require.NoError(w.t, err)
	state, err := redisstate.New(rdb, w.dc.ApplicationID())
	require.NoError(w.t, err)
	return w.bot(cfg, []int{i}, plugin.WithFleet(f), plugin.WithState(state)), f, state
}

// TestFleetOfThree runs the perks in a fleet of three processes (one shard
// each) sharing a real redis-server. A user opts in through one process; the
// leader ingests the votes; the gate in a follower's process lets a voter
// through as soon as its mirror knows the vote, and answers a non-voter with
// the vote link. The leader is stopped at the very moment a vote expires,
// its handlers cut off at once: another process leads, and the voter gets
// exactly one reminder and loses the role.
func TestFleetOfThree(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	srv := redistest.Start(t)
	w := newWorld(t, 3)
	cfg := w.config()
	cfg.VoteStopGrace = time.Millisecond // a stop is as abrupt as a kill for the handlers
	bots := make([]*plugin.Plugin, 3)
	fleets := make([]*fleet.Fleet, 3)
	states := make([]*redisstate.State, 3)
	for i := range bots {
		bots[i], fleets[i], states[i] = w.fleetBot(srv.URL(), cfg, i)
		w.start(bots[i])
		require.NoError(t, w.sessions[i].Open())
	}
	leader := func() int {
		return slices.IndexFunc(fleets, func(f *fleet.Fleet) bool { return f.Lease().State().Leader })
	}
	require.Eventually(t, func() bool { return leader() >= 0 }, wait, tick, "no process leads")
	lead := leader()
	follower := (lead + 1) % 3

	const life = 4 * time.Second
	now := time.Now().UTC()
	alice, frank := vote(1, now, life), vote(6, now, 12*time.Hour)
	const erin = "310000000000000005"
	on := true
	// The opt-in reaches whichever process has the guild's shard.
	assert.Contains(t, w.interact((lead+2)%3, "vote", alice.PlatformID, &on).Content, "I will send you a direct message")

	w.tg.AddVote(alice, frank)
	require.Eventually(t, func() bool { return bots[follower].Active(frank.PlatformID).Active }, wait, tick,
		"the follower's mirror never learnt the vote the leader ingested")
	assert.Equal(t, premiumText, w.interact(follower, premiumName, frank.PlatformID, nil).Content)
	gate := w.interact(follower, premiumName, erin, nil)
	assert.Contains(t, gate.Content, "https://top.gg/bot/"+w.dc.ApplicationID()+"/vote")
	require.Eventually(t, func() bool {
		added, _ := w.roleChanges()
		return added[alice.PlatformID] >= 1
	}, wait, tick, "alice never got the role")

	// The leader goes at the moment alice's vote expires.
	select {
	case <-time.After(time.Until(alice.ExpiresAt)):
	case <-w.ctx().Done():
		t.Fatal("timed out")
	}
	require.NoError(t, w.stop(bots[lead]))
	require.Eventually(t, func() bool { l := leader(); return l >= 0 && l != lead }, wait, tick, "no process took over")
	store := states[(lead+1)%3]
	require.Eventually(t, func() bool {
		snap, err := store.Load(w.ctx())
		return err == nil && !slices.ContainsFunc(snap.Expiries, func(v voterewards.Vote) bool {
			return v.PlatformID == alice.PlatformID
		}) && len(w.dmsTo(alice.PlatformID)) > 0
	}, wait, tick, "alice's expiry was never handled")
	dms := w.dmsTo(alice.PlatformID)
	assert.Len(t, dms, 1, "one reminder per vote, whoever leads")
	assert.Contains(t, dms[0].Content, "To stop these reminders")
	assert.Empty(t, w.dc.MemberRoles(w.guilds[0], alice.PlatformID))
	assert.Equal(t, []string{voterRole}, w.dc.MemberRoles(w.guilds[0], frank.PlatformID))
}

// TestFleetLeaderKilledAtTheDueTime: the fleet's leader is another process
// (this test binary, run as a child), killed with SIGKILL at the moment a
// vote expires: no release of the lease, no grace, whatever it was doing cut
// short. A process of this one takes over once the lease expires, delivers
// the expiry, and the voter gets exactly one reminder and loses the role.
func TestFleetLeaderKilledAtTheDueTime(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	redistest.Require(t)
	t.Parallel()
	srv := redistest.Start(t)
	w := newWorld(t, 3)
	child, leads := startChild(t, w, srv.URL())
	select {
	case <-leads:
	case <-w.ctx().Done():
		t.Fatal("the child never led")
	}
	// This process runs shards 1 and 2 as two more processes of the fleet.
	cfg := w.config()
	var followers []*fleet.Fleet
	var state *redisstate.State // the first follower's
	for i := 1; i <= 2; i++ {
		p, f, s := w.fleetBot(srv.URL(), cfg, i)
		w.start(p)
		require.NoError(t, w.sessions[i].Open())
		followers = append(followers, f)
		if state == nil {
			state = s
		}
	}

	now := time.Now().UTC()
	alice := vote(1, now, 4*time.Second)
	on := true
	assert.Contains(t, w.interact(1, "vote", alice.PlatformID, &on).Content, "I will send you a direct message")
	w.tg.AddVote(alice)
	require.Eventually(t, func() bool { return len(w.dc.MemberRoles(w.guilds[0], alice.PlatformID)) == 1 }, wait, tick,
		"the leader never gave the role")
	select {
	case <-time.After(time.Until(alice.ExpiresAt)):
	case <-w.ctx().Done():
		t.Fatal("timed out")
	}
	require.NoError(t, child.Process.Kill())

	require.Eventually(t, func() bool {
		return slices.ContainsFunc(followers, func(f *fleet.Fleet) bool { return f.Lease().State().Leader })
	}, wait, tick, "no process took over")
	require.Eventually(t, func() bool {
		snap, err := state.Load(w.ctx())
		return err == nil && !slices.ContainsFunc(snap.Expiries, func(v voterewards.Vote) bool {
			return v.PlatformID == alice.PlatformID
		}) && len(w.dmsTo(alice.PlatformID)) > 0
	}, wait, tick, "alice's expiry was never handled")
	assert.Len(t, w.dmsTo(alice.PlatformID), 1, "one reminder per vote, whoever leads")
	assert.Empty(t, w.dc.MemberRoles(w.guilds[0], alice.PlatformID))
}

// startChild starts this test binary as the fleet's process of shard 0 and
// returns it and a channel closed once it leads. Its output is logged when
// the test fails; it is killed at the end of the test if still running.
func startChild(t *testing.T, w *world, redisURL string) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", childRedisEnv+"="+redisURL, childTopggEnv+"="+w.tg.URL,
		childTopggTok+"="+w.tg.Token(), childDiscordEnv+"="+w.dc.APIBase(), childDiscordTok+"="+w.dc.Token(),
		childBotEnv+"="+w.dc.ApplicationID(), childGuildEnv+"="+w.guilds[0])
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	leads := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "leader" {
				close(leads)
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		httpx.Within("the killed child process to exit", func() { <-read; _ = cmd.Wait() })
		if t.Failed() {
			t.Logf("child's stderr:\n%s", stderr.String())
		}
	})
	return cmd, leads
}

// The killed-leader test runs this test binary as the fleet's first process
// (shard 0 of 3); its settings come in these variables.
const (
	childEnv        = "VOTERPERKS_TEST_CHILD"
	childRedisEnv   = "VOTERPERKS_TEST_REDIS"
	childTopggEnv   = "VOTERPERKS_TEST_TOPGG" // base URL
	childTopggTok   = "VOTERPERKS_TEST_TOPGG_TOKEN"
	childDiscordEnv = "VOTERPERKS_TEST_DISCORD" // API base
	childDiscordTok = "VOTERPERKS_TEST_DISCORD_TOKEN"
	childBotEnv     = "VOTERPERKS_TEST_BOT"
	childGuildEnv   = "VOTERPERKS_TEST_GUILD"
)

// childLease is the lease of every process of the killed-leader test.
const childLease = time.Second

// childMain runs the process until SIGTERM (or SIGKILL), printing "leader"
// on stdout once it leads.
func childMain() int {
	if err := runChild(); err != nil {
		fmt.Println("error", err)
		return 1
	}
	return 0
}

func runChild() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("process", "child")
	client, err := topgg.New(os.Getenv(childTopggTok), topgg.WithBaseURL(os.Getenv(childTopggEnv)))
	if err != nil {
		return err
	}
	group, err := shards.New(os.Getenv(childDiscordTok), 3, shards.WithAPIBase(os.Getenv(childDiscordEnv)), shards.WithShardIDs(0))
	if err != nil {
		return err
	}
	rdb, err := fleet.NewUniversalClient(os.Getenv(childRedisEnv))
	if err != nil {
		return err
	}
	defer rdb.Close()
	f, err := fleet.New(rdb, fleet.Config{Bot: os.Getenv(childBotEnv), ShardCount: 3, LeaseTTL: childLease, Logger: log})
	if err != nil {
		return err
	}
	state, err := redisstate.New(rdb, os.Getenv(childBotEnv))
	if err != nil {
		return err
	}
	p, err := plugin.New(client, childConfig(), plugin.WithFleet(f), plugin.WithState(state), plugin.WithLogger(log),
		plugin.WithVoterPerks(plugin.VoterPerks{BotID: os.Getenv(childBotEnv), Reminders: true,
			Role: &voterperks.Role{GuildID: os.Getenv(childGuildEnv), RoleID: voterRole}}))
	if err != nil {
		return err
	}
	if err := p.Attach(group.Sessions()...); err != nil {
		return err
	}
	go func() {
		for ctx.Err() == nil && !f.Lease().State().Leader {
			time.Sleep(time.Millisecond)
		}
		fmt.Println("leader")
	}()
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()
	return errors.Join(group.Open(ctx), <-ran, group.Close())
}

// childConfig is the plugin Config of every process of the killed-leader
// test.
func childConfig() plugin.Config {
	return plugin.Config{
		Autopost: "off", SyncCommands: new(false), VotePollInterval: new(20 * time.Millisecond),
		VoteLookback: 13 * time.Hour, VoteRetryDelay: 20 * time.Millisecond,
	}
}
