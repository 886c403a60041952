package voterperks_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/redisstate"
	"github.com/dblkit/go-topgg/voterewards"
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
