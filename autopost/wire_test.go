package autopost_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestCountsExactOverGuildLifecycle: READY with stubs and lazy GUILD_CREATEs,
// then a join, a removal, an outage and a return; each posted server_count
// is exact, with handlers run out of order (SyncEvents false, discordgo's
// default) and in order.
func TestCountsExactOverGuildLifecycle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		shards int
		sync   bool
	}{{1, false}, {3, false}, {3, true}} {
		t.Run(fmt.Sprintf("shards=%d/sync=%v", tc.shards, tc.sync), func(t *testing.T) {
			t.Parallel()
			const perShard = 4
			f := newFixture(t, setup{shards: tc.shards, perShard: perShard, syncEvents: tc.sync})
			ctx := f.ctx()
			last := tc.shards - 1
			want := tc.shards * perShard
			timeline := []int{want}
			step := func(delta int) {
				t.Helper()
				want += delta
				timeline = append(timeline, want)
				f.waitPosted(want)
			}
			f.waitPosted(want)

			require.NoError(t, f.dc.Join(ctx, f.guild(100, last)))
			step(+1)
			require.NoError(t, f.dc.Remove(ctx, f.guild(0, 0)))
			step(-1)

			// An outage keeps the guild counted: the join after it shows want+1.
			outage := f.guild(1, last)
			require.NoError(t, f.dc.Outage(ctx, outage))
			require.Eventually(t, func() bool { return f.counts().Unavailable == 1 }, 5*time.Second, 5*time.Millisecond)
			assert.Equal(t, want, f.counts().Servers)
			require.NoError(t, f.dc.Join(ctx, f.guild(101, 0)))
			step(+1)

			// Its return does not count it twice.
			require.NoError(t, f.dc.Restore(ctx, outage))
			require.Eventually(t, func() bool { return f.counts().Unavailable == 0 }, 5*time.Second, 5*time.Millisecond)
			require.NoError(t, f.dc.Join(ctx, f.guild(102, last)))
			step(+1)

			c := f.counts()
			assert.True(t, c.Complete())
			assert.Equal(t, want, c.Servers)
			assert.Equal(t, tc.shards, c.Shards)
			assert.Len(t, c.PerShard, tc.shards)
			assert.Equal(t, len(f.dc.GuildIDs()), c.Servers, "the fake Discord agrees")

			// No post ever carried a number off the timeline (a lagging count
			// is fine, a wrong one is not).
			var posted []int
			for _, p := range f.patches() {
				if n := p.Metrics["server_count"]; len(posted) == 0 || posted[len(posted)-1] != n {
					posted = append(posted, n)
				}
			}
			assert.True(t, isSubsequence(posted, timeline), "posted %v, timeline %v", posted, timeline)
		})
	}
}

func isSubsequence(sub, seq []int) bool {
	i := 0
	for _, v := range seq {
		if i < len(sub) && sub[i] == v {
			i++
		}
	}
	return i == len(sub)
}

// TestV0Stats: v0 mode posts /bots/:id/stats with the bot id from READY, the
// bare token, and the per-shard list when every shard is here.
func TestV0Stats(t *testing.T) {
	t.Parallel()
	botID := topggtest.DiscordBot().PlatformID
	t.Run("all shards", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, setup{shards: 2, perShard: 3, cfg: autopost.Config{Mode: autopost.ModeV0},
			dcOpts: []discordtest.Option{discordtest.WithBotUser(botID, "Example Bot")}})
		require.NoError(t, f.dc.Join(f.ctx(), f.guild(9, 1)))
		path := "/bots/" + botID + "/stats"
		require.Eventually(t, func() bool {
			st, ok := f.tg.LegacyStats()
			return ok && st.ServerCount == 7
		}, 5*time.Second, 5*time.Millisecond)
		reqs := f.requests(http.MethodPost, path)
		last := reqs[len(reqs)-1]
		assert.Equal(t, f.tg.Token(), last.Header.Get("Authorization"), "v0 takes the bare token")
		assert.JSONEq(t, `{"server_count":7,"shards":[3,4],"shard_count":2}`, string(last.Body))
		assert.Empty(t, f.tg.Metrics(), "nothing posted to v1")
	})
	t.Run("one shard of two", func(t *testing.T) {
		t.Parallel()
		// The other shard runs elsewhere: this process has no exact total,
		// so it posts nothing (a fleet's Source gives the leader all shards).
		f := newFixture(t, setup{shards: 2, perShard: 3, open: []int{1}, clock: newClock(),
			cfg:    autopost.Config{Mode: autopost.ModeV0, ShardCount: 2, ReadyTimeout: time.Minute},
			dcOpts: []discordtest.Option{discordtest.WithBotUser(botID, "Example Bot")}})
		require.Eventually(t, func() bool { return f.counts().Servers == 3 }, 5*time.Second, time.Millisecond)
		f.tick(time.Minute)
		require.Eventually(t, func() bool { return len(f.resultsCopy()) > 0 }, 5*time.Second, time.Millisecond)
		assert.Equal(t, []int{0}, f.resultsCopy()[0].Missing)
		assert.Empty(t, f.tg.Requests())
	})
}

// TestLogsOnePlainLinePerPost checks the log: one line per post, and no
// token anywhere.
func TestLogsOnePlainLinePerPost(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	f := newFixture(t, setup{perShard: 2, cfg: autopost.Config{Logger: newTextLogger(&buf)}})
	f.waitPosted(2)
	require.Eventually(t, func() bool { return len(f.resultsCopy()) > 0 }, 5*time.Second, 5*time.Millisecond)
	f.stop()
	out := buf.String()
	assert.Contains(t, out, `msg="posted the server count to Top.gg" component=autopost servers=2 shards=1`)
	assert.NotContains(t, out, f.tg.Token())
}

// TestNewRefusesIntervalBelowFloor: an interval below MinInterval is an error
// at New for a client of the real service (it used to be a warning at Run);
// a client of a fake on this machine (a loopback base URL) may go lower.
func TestNewRefusesIntervalBelowFloor(t *testing.T) {
	t.Parallel()
	remote, err := topgg.New("token")
	require.NoError(t, err)
	_, err = autopost.New(remote, autopost.Config{Interval: time.Millisecond})
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "autopost.Config.Interval", ce.Field)
	assert.Equal(t, "autopost.Config.Interval: 1ms is below 15m0s, the floor that keeps the bot within Top.gg's limits", err.Error())
	_, err = autopost.New(remote, autopost.Config{Interval: autopost.MinInterval})
	require.NoError(t, err)

	local, err := topgg.New("token", topgg.WithBaseURL("http://127.0.0.1:1/api"))
	require.NoError(t, err)
	_, err = autopost.New(local, autopost.Config{Interval: time.Millisecond})
	require.NoError(t, err)
}
