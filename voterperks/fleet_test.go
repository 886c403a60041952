package voterperks_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/pgstore"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
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
	child := startChild(t, w, srv.URL())
	require.Equal(t, 1, child.WaitLines("leader", 1, wait), "the child never led")
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
	require.NoError(t, child.Kill())

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

// startChild starts this test binary as the fleet's process of shard 0.
// Its output is logged when the test fails.
func startChild(t *testing.T, w *world, redisURL string) *testlog.Child {
	t.Helper()
	c := testlog.StartChild(t, "child", "", childEnv+"=1", childRedisEnv+"="+redisURL, childTopggEnv+"="+w.tg.URL,
		childTopggTok+"="+w.tg.Token(), childDiscordEnv+"="+w.dc.APIBase(), childDiscordTok+"="+w.dc.Token(),
		childBotEnv+"="+w.dc.ApplicationID(), childGuildEnv+"="+w.guilds[0])
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(c.Output())
		}
	})
	return c
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

// TestOneProcess runs the perks in one process through the plugin, real
// discordgo sessions against the fake Discord and a real client against the
// fake Top.gg. Users opt in with /vote remind:True; the opt-ins survive a
// restart (the state directory's file, closed and opened again). Each vote
// gives the voter role; each expiry takes it back and sends one reminder to
// those who opted in, no earlier than the expiry and saying how to stop
// them, once even though the expiry is delivered twice (a handler after the
// perks' fails once). A user who did not opt in gets none; one who voted
// again before the expiry keeps the role and gets none; one whose DMs are
// closed loses the role and is not retried. /premium, gated, answers a user
// without a vote with the vote link (ephemeral) and runs for a voter; /vote
// and /leaderboard answer from the cache and the ledger.
//
// gocyclo: one scenario told in order.
func TestOneProcess(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	dir := t.TempDir()
	state := openState(t, dir)
	cfg := w.config()
	const life = 3 * time.Second
	now := time.Now().UTC()
	alice, bob, carol, dave, frank := vote(1, now, life), vote(2, now, life), vote(3, now, 12*time.Hour), vote(4, now, life), vote(6, now, 12*time.Hour)
	const erin = "310000000000000005"
	require.NoError(t, w.dc.BlockDMs(dave.PlatformID))

	bot := w.bot(cfg, []int{0}, plugin.WithState(state))
	w.start(bot)
	require.NoError(t, w.sessions[0].Open())
	on, off := true, false
	for _, u := range []topggtest.Vote{alice, carol, dave} {
		assert.Contains(t, w.interact(0, "vote", u.PlatformID, &on).Content, "I will send you a direct message when you can vote again.")
	}
	assert.Contains(t, w.interact(0, "vote", bob.PlatformID, &off).Content, "I will not remind you to vote.")
	require.NoError(t, w.stop(bot))
	require.NoError(t, state.Close())
	w.newSession(0)

	// The opt-ins are read back after the restart.
	state = openState(t, dir)
	var expired testkit.Counter // calls per user
	var failedOnce atomic.Bool
	bot = w.bot(cfg, []int{0}, plugin.WithState(state), plugin.WithExpiryHandler(func(_ context.Context, v voterewards.Vote) error {
		if expired.Add(v.PlatformID) == 1 && v.PlatformID == alice.PlatformID {
			failedOnce.Store(true)
			return errors.New("the bot's own expiry work failed once")
		}
		return nil
	}))
	w.start(bot)
	require.NoError(t, w.sessions[0].Open())
	require.Eventually(t, func() bool { return bot.Active(erin).Covered }, wait, tick, "the history was never read")
	gate := w.interact(0, premiumName, erin, nil)
	assert.Equal(t, discordgo.MessageFlagsEphemeral, gate.Flags)
	assert.Contains(t, gate.Content, "https://top.gg/bot/"+w.dc.ApplicationID()+"/vote")
	assert.Contains(t, gate.Content, "you can vote now")

	// carol voted 11.5 hours ago (that vote expires in a few seconds) and
	// votes again now: she cannot vote yet, so she keeps the role and gets
	// no reminder.
	carolEarlier := carol
	carolEarlier.CreatedAt, carolEarlier.ExpiresAt = now.Add(-11*time.Hour-30*time.Minute), now.Add(life)
	w.tg.AddVote(alice, bob, carolEarlier, carol, dave, frank)
	require.Eventually(t, func() bool {
		added, _ := w.roleChanges()
		return added[alice.PlatformID] == 1 && added[bob.PlatformID] == 1 && added[carol.PlatformID] == 2 &&
			added[dave.PlatformID] == 1 && added[frank.PlatformID] == 1
	}, wait, tick, "the votes were not all rewarded with the role")

	assert.Equal(t, premiumText, w.interact(0, premiumName, frank.PlatformID, nil).Content, "a voter is let through the gate")
	reply := w.interact(0, "vote", frank.PlatformID, nil)
	assert.Contains(t, reply.Content, "Your vote is active until")
	assert.Contains(t, reply.Content, "Streak: 1")
	board := w.interact(0, "leaderboard", erin, nil).Content
	for _, u := range []topggtest.Vote{alice, bob, carol, dave, frank} {
		assert.Contains(t, board, "<@"+u.PlatformID+">")
	}
	assert.Contains(t, board, "<@"+carol.PlatformID+">: 2 votes")
	assert.NotContains(t, board, erin)

	dms, err := w.dc.WaitDirectMessages(w.ctx(), alice.PlatformID, 1)
	require.NoError(t, err)
	assert.False(t, time.Now().Before(alice.ExpiresAt), "reminded before the vote expired")
	assert.Contains(t, dms[0].Content, "you can vote again now! https://top.gg/bot/"+w.dc.ApplicationID()+"/vote")
	assert.Contains(t, dms[0].Content, "To stop these reminders, use /vote remind:False.")
	require.Eventually(t, func() bool {
		return expired.Get(alice.PlatformID) == 2 && expired.Get(bob.PlatformID) == 1 &&
			expired.Get(carol.PlatformID) == 1 && expired.Get(dave.PlatformID) == 1
	}, wait, tick, "the expiries were not all handled")
	assert.True(t, failedOnce.Load())
	assert.Len(t, w.dmsTo(alice.PlatformID), 1, "the redelivered expiry reminded again")
	assert.Empty(t, w.dmsTo(bob.PlatformID), "bob did not opt in")
	assert.Empty(t, w.dmsTo(carol.PlatformID), "carol voted again")
	assert.Empty(t, w.dmsTo(dave.PlatformID), "dave's DMs are closed")
	guild := w.guilds[0]
	assert.Empty(t, w.dc.MemberRoles(guild, alice.PlatformID))
	assert.Empty(t, w.dc.MemberRoles(guild, bob.PlatformID))
	assert.Empty(t, w.dc.MemberRoles(guild, dave.PlatformID))
	assert.Equal(t, []string{voterRole}, w.dc.MemberRoles(guild, carol.PlatformID), "carol voted again: she keeps the role")
	assert.Equal(t, []string{voterRole}, w.dc.MemberRoles(guild, frank.PlatformID))
}

// openState opens the bot's state in dir, closed at the end of the test
// (after the bots started later stopped).
func openState(t *testing.T, dir string) *boltstate.State {
	t.Helper()
	s, err := boltstate.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() }) // a second Close, after the test's own, does nothing
	return s
}

// TestPostgreSQL runs the perks of a bot whose state is in PostgreSQL (a
// real server): the opt-in is kept beside the votes, /vote and /leaderboard
// read its ledger, and the expiry takes the role back and sends one reminder.
func TestPostgreSQL(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := pgstore.Open(ctx, pg.Pool(t), pgstore.Config{})
	require.NoError(t, err)
	w := newWorld(t, 1)
	bot := w.bot(w.config(), []int{0}, plugin.WithState(store))
	w.start(bot)
	require.NoError(t, w.sessions[0].Open())

	now := time.Now().UTC()
	alice := vote(1, now, 3*time.Second)
	on := true
	assert.Contains(t, w.interact(0, "vote", alice.PlatformID, &on).Content, "I will send you a direct message")
	got, _, err := store.Reminder(ctx, alice.PlatformID)
	require.NoError(t, err)
	require.True(t, got, "the opt-in is not in PostgreSQL")
	w.tg.AddVote(alice)
	require.Eventually(t, func() bool { return len(w.dc.MemberRoles(w.guilds[0], alice.PlatformID)) == 1 }, wait, tick)
	assert.Contains(t, w.interact(0, "vote", alice.PlatformID, nil).Content, "Streak: 1 · votes this month: 1 · all time: 1")
	assert.Contains(t, w.interact(0, "leaderboard", alice.PlatformID, nil).Content, "1. <@"+alice.PlatformID+">: 1 vote")

	dms, err := w.dc.WaitDirectMessages(w.ctx(), alice.PlatformID, 1)
	require.NoError(t, err)
	assert.Contains(t, dms[0].Content, "To stop these reminders")
	require.Eventually(t, func() bool {
		_, last, err := store.Reminder(ctx, alice.PlatformID)
		return err == nil && last != ""
	}, wait, tick, "the reminder was never recorded")
	assert.Empty(t, w.dc.MemberRoles(w.guilds[0], alice.PlatformID))
	assert.Len(t, w.dmsTo(alice.PlatformID), 1)
}
