package main

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/plugin/plugintest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// fleetLease is TOPGG_FLEET_LEASE in the fleet test.
const fleetLease = 2 * time.Second

// TestE2EFleetOfThreeProcesses runs the built bot as three processes of one
// fleet (SHARD_COUNT=6, SHARD_IDS 0-1, 2-3, 4-5; shard i has i+1 guilds, 21
// in all) against the fake Discord, the fake Top.gg and one redis-server
// with a password. Every accepted post carries the exact total and
// shard_count 6; one process leads at a time; 300 history votes are
// rewarded by the leader. The leader is killed (SIGKILL) in the middle of
// the deliveries: another process leads and posts within 2x the lease TTL,
// the killed process's shards still count, and every vote is rewarded, at
// most the deliveries in flight twice. No output shows a token or the Redis
// password.
func TestE2EFleetOfThreeProcesses(t *testing.T) {
	if testing.Short() || botBinary == "" {
		t.Skip("end-to-end test: runs the built bot (not with -short)")
	}
	t.Parallel()
	const shardCount, total, password = 6, 21, "redis-pw-5e0c91d2"
	srv := redistest.Start(t, redistest.WithPassword(password))
	var guilds []string
	for shard := range shardCount {
		for n := range shard + 1 {
			guilds = append(guilds, plugintest.GuildIDForShard(n, shard, shardCount))
		}
	}
	dc, err := plugintest.NewServer(plugintest.WithToken(e2eDiscordToken), plugintest.WithShardCount(shardCount),
		plugintest.WithGuilds(guilds...))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	project := topggtest.DiscordBot()
	project.PlatformID = dc.BotUserID()
	tg := topggtest.NewServer(topggtest.WithToken(e2eTopggToken), topggtest.WithProject(project), topggtest.WithPageSize(50))
	t.Cleanup(tg.Close)
	rewardGuild := plugintest.GuildIDForShard(0, 0, shardCount)
	e := &e2e{t: t, dc: dc, tg: tg, state: t.TempDir(), env: map[string]string{
		"DISCORD_TOKEN": e2eDiscordToken, "TOPGG_TOKEN": e2eTopggToken,
		"TOPGG_API_URL": tg.URL, "DISCORD_API_URL": dc.APIBase(),
		"TOPGG_AUTOPOST_INTERVAL": "200ms", "TOPGG_VOTE_POLL_INTERVAL": "100ms",
		"SHARD_COUNT": fmt.Sprint(shardCount), "REWARD_GUILD_ID": rewardGuild, "REWARD_ROLE_ID": rewardRole,
		"TOPGG_STATE_DIR": t.TempDir(), "LOG_FORMAT": "json", "LOG_LEVEL": "debug",
		"REDIS_URL": srv.URL(), "TOPGG_FLEET_LEASE": fleetLease.String(),
	}}
	// The grants take 10 ms each, one after the other: 300 of them last
	// about 3 s, so the kill lands in the middle of the deliveries.
	e.slowRoles(10 * time.Millisecond)
	all := makeVotes(300)
	tg.AddVotes(all...)

	var procs []*proc
	for _, ids := range []string{"0-1", "2-3", "4-5"} {
		env := maps.Clone(e.env)
		env["SHARD_IDS"] = ids
		procs = append(procs, e.start(env))
	}
	t.Cleanup(func() {
		for _, p := range procs {
			for _, out := range []string{p.stdout.String(), p.stderr.String()} {
				assert.NotContains(t, out, password, "the Redis password appeared in the output")
			}
		}
	})
	leaders := func(ps []*proc) []*proc {
		var out []*proc
		for _, p := range ps {
			if p.countMsg("became leader") > 0 {
				out = append(out, p)
			}
		}
		return out
	}
	requireExactPosts := func() {
		t.Helper()
		for _, m := range tg.Metrics() {
			require.Equal(t, map[string]int{"server_count": total, "shard_count": shardCount}, m.Metrics,
				"a post that is not the exact fleet total")
		}
	}

	require.Eventually(t, func() bool { return len(tg.Metrics()) > 0 }, wait, tick, "the fleet total was never posted")
	requireExactPosts()
	require.Eventually(t, func() bool { added, _ := e.grants(); return len(added) >= 20 }, wait, time.Millisecond,
		"the leader never rewarded a vote")
	ls := leaders(procs)
	require.Len(t, ls, 1, "one leader at a time")
	leader := ls[0]
	leader.kill()
	killed := time.Now()
	atKill, _ := e.grants()
	require.Less(t, len(atKill), len(all), "every vote was rewarded before the kill: the test proves nothing")
	posted := len(tg.Metrics())
	t.Logf("killed the leader after %d of %d grants and %d posts", len(atKill), len(all), posted)

	var rest []*proc
	for _, p := range procs {
		if p != leader {
			rest = append(rest, p)
		}
	}
	require.Eventually(t, func() bool { return len(tg.Metrics()) > posted }, wait, tick, "no post after the leader died")
	took := time.Since(killed)
	t.Logf("a new leader posted %v after the kill (lease TTL %v)", took.Round(time.Millisecond), fleetLease)
	assert.Less(t, took, 2*fleetLease, "the new leader posted later than 2x the lease TTL")
	requireExactPosts() // the killed process's shards 0-1 still count
	require.Len(t, leaders(rest), 1, "one new leader")

	require.Eventually(t, func() bool { added, _ := e.grants(); return len(added) == len(all) }, wait, tick,
		"a vote was lost when the leader died")
	added, _ := e.grants()
	twice := 0
	for _, v := range all {
		n := added[v.PlatformID]
		assert.GreaterOrEqual(t, n, 1, v.PlatformID)
		assert.LessOrEqual(t, n, 2, v.PlatformID)
		if n > 1 {
			twice++
		}
	}
	// The default VoteConcurrency is 4 handlers at once.
	assert.LessOrEqual(t, twice, 4, "more votes rewarded twice than handlers running at once")
	t.Logf("%d votes rewarded twice after the leader's kill -9", twice)
	for _, p := range rest {
		assert.Zero(t, strings.Count(p.stderr.String(), `"level":"ERROR"`), "errors logged:\n%s", p.stderr.String())
		p.terminate()
	}
}
