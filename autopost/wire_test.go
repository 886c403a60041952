package autopost_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/plugin/plugintest"
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
			require.Eventually(t, func() bool { return f.poster.Counts().Unavailable == 1 }, 5*time.Second, 5*time.Millisecond)
			assert.Equal(t, want, f.poster.Counts().Servers)
			require.NoError(t, f.dc.Join(ctx, f.guild(101, 0)))
			step(+1)

			// Its return does not count it twice.
			require.NoError(t, f.dc.Restore(ctx, outage))
			require.Eventually(t, func() bool { return f.poster.Counts().Unavailable == 0 }, 5*time.Second, 5*time.Millisecond)
			require.NoError(t, f.dc.Join(ctx, f.guild(102, last)))
			step(+1)

			c := f.poster.Counts()
			assert.True(t, c.Ready)
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

// TestFirstPostWaitsForEveryShard: nothing is posted before the last
// attached shard has its READY.
func TestFirstPostWaitsForEveryShard(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{shards: 3, perShard: 2, open: []int{0, 1}, idle: []int{2},
		cfg: autopost.Config{ReadyTimeout: time.Hour}})
	// The first two shards are ready; several intervals pass.
	require.Eventually(t, func() bool { return f.poster.Counts().Servers == 4 }, 5*time.Second, 5*time.Millisecond)
	assert.Never(t, func() bool { return len(f.tg.Requests()) > 0 }, 300*time.Millisecond, 10*time.Millisecond)
	assert.False(t, f.poster.Counts().Ready)

	require.NoError(t, f.sessions[2].Open())
	f.waitPosted(6)
	assert.Equal(t, 6, f.patches()[0].Metrics["server_count"], "the first post has every shard")
}

// TestFirstPostAfterReadyTimeout: a shard that never connects delays the
// first post by ReadyTimeout only; the shards that are ready are posted.
func TestFirstPostAfterReadyTimeout(t *testing.T) {
	t.Parallel()
	start := time.Now()
	f := newFixture(t, setup{shards: 2, perShard: 3, open: []int{0}, idle: []int{1},
		cfg: autopost.Config{ReadyTimeout: 200 * time.Millisecond}})
	f.waitPosted(3)
	assert.GreaterOrEqual(t, f.requests(http.MethodPatch, metricsPath)[0].At.Sub(start), 200*time.Millisecond)
}

// TestSkipsUnchangedAndRefreshes: unchanged numbers are not posted again
// until Refresh has passed.
func TestSkipsUnchangedAndRefreshes(t *testing.T) {
	t.Parallel()
	t.Run("skip", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, setup{perShard: 2})
		f.waitPosted(2)
		assert.Never(t, func() bool { return len(f.patches()) > 1 }, 300*time.Millisecond, 10*time.Millisecond)
		skipped := 0
		for _, r := range f.resultsCopy() {
			if r.Skipped {
				skipped++
				assert.NoError(t, r.Err)
				assert.Equal(t, 2, r.Servers)
			}
		}
		assert.GreaterOrEqual(t, skipped, 3)
		require.NoError(t, f.dc.Join(f.ctx(), f.guild(50, 0)))
		f.waitPosted(3)
	})
	t.Run("refresh", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, setup{perShard: 2, cfg: autopost.Config{Refresh: 150 * time.Millisecond}})
		f.waitPosted(2)
		require.Eventually(t, func() bool { return len(f.patches()) >= 2 }, 5*time.Second, 5*time.Millisecond)
		assert.Equal(t, 2, f.patches()[1].Metrics["server_count"])
		var posts []autopost.Result
		for _, r := range f.resultsCopy() {
			if !r.Skipped {
				posts = append(posts, r)
			}
		}
		require.GreaterOrEqual(t, len(posts), 2)
		assert.GreaterOrEqual(t, posts[1].At.Sub(posts[0].At), 150*time.Millisecond)
	})
}

// TestHonoursRetryAfter: after a 429 the next request waits Retry-After.
func TestHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	// The client hands every 429 to the Poster instead of waiting it out.
	retry := topgg.RetryPolicy{MaxAttempts: 1}
	f := newFixture(t, setup{perShard: 2, retry: &retry, tgOpts: nil})
	f.waitPosted(2)
	f.tg.Inject(topggtest.Fault{Method: http.MethodPatch, Path: metricsPath, RetryAfter: time.Second})
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(50, 0)))
	f.waitPosted(3)

	reqs := f.requests(http.MethodPatch, metricsPath)
	require.Len(t, reqs, 3, "the first post, the refused one, the retry")
	assert.GreaterOrEqual(t, reqs[2].At.Sub(reqs[1].At), time.Second, "no request before Retry-After passed")

	var limited []autopost.Result
	for _, r := range f.resultsCopy() {
		if r.Err != nil {
			limited = append(limited, r)
		}
	}
	require.Len(t, limited, 1)
	var rl *topgg.RateLimitError
	require.ErrorAs(t, limited[0].Err, &rl)
	assert.Equal(t, time.Second, rl.RetryAfter)
	assert.Equal(t, time.Second, limited[0].RetryIn)
}

// TestBackfillAfterOutage: while Top.gg is unreachable (dropped connections,
// then 503s) the Poster keeps one sample per interval; when it is back they
// go in one batch, in timestamp order, then the current numbers.
func TestBackfillAfterOutage(t *testing.T) {
	t.Parallel()
	const interval = 40 * time.Millisecond
	f := newFixture(t, setup{perShard: 2, cfg: autopost.Config{Interval: interval}})
	f.waitPosted(2)

	f.tg.Inject(topggtest.Fault{Path: metricsPath + "*", Drop: true, Times: 6})
	f.tg.Inject(topggtest.Fault{Path: metricsPath + "*", Status: http.StatusServiceUnavailable, Times: 14})
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(50, 0))) // 3: the first failed post
	require.Eventually(t, func() bool { return f.tg.PendingFaults() < 10 }, 5*time.Second, time.Millisecond)
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(51, 0))) // 4: posted during the outage
	require.Eventually(t, func() bool { return f.tg.PendingFaults() == 0 }, 10*time.Second, 5*time.Millisecond)
	f.waitPosted(4)

	var batch []topggtest.MetricsRecord
	for _, m := range f.tg.Metrics() {
		if m.Batch {
			batch = append(batch, m)
		}
	}
	require.GreaterOrEqual(t, len(batch), 2, "an outage of several intervals")
	assert.Equal(t, 3, batch[0].Metrics["server_count"], "the first missed post")
	for i, m := range batch {
		assert.Equal(t, 1, m.Metrics["shard_count"])
		assert.Contains(t, []int{3, 4}, m.Metrics["server_count"])
		if i > 0 {
			assert.GreaterOrEqual(t, m.Timestamp.Sub(batch[i-1].Timestamp), interval, "one sample per interval, ascending")
			assert.GreaterOrEqual(t, m.Metrics["server_count"], batch[i-1].Metrics["server_count"])
		}
	}

	// One batch request got through, before the PATCH with the current numbers.
	var okBatches int
	var batchAt, patchAt int
	for i, r := range f.tg.Requests() {
		if r.Path == metricsPath+"/batch" {
			var body struct {
				Data []struct {
					Timestamp time.Time      `json:"timestamp"`
					Metrics   map[string]int `json:"metrics"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.Body, &body))
			assert.True(t, slices.IsSortedFunc(body.Data, func(a, b struct {
				Timestamp time.Time      `json:"timestamp"`
				Metrics   map[string]int `json:"metrics"`
			}) int {
				return a.Timestamp.Compare(b.Timestamp)
			}), "batch sent in timestamp order")
			batchAt = i
		}
		if r.Method == http.MethodPatch && r.Path == metricsPath {
			patchAt = i
		}
	}
	for _, r := range f.resultsCopy() {
		if r.Backfilled > 0 {
			okBatches++
			assert.Equal(t, len(batch), r.Backfilled)
			assert.NoError(t, r.Err)
		}
	}
	assert.Equal(t, 1, okBatches)
	assert.Less(t, batchAt, patchAt, "the batch goes before the current numbers")

	var unreachable int
	for _, r := range f.resultsCopy() {
		var re *topgg.RequestError
		var ae *topgg.APIError
		if errors.As(r.Err, &re) || (errors.As(r.Err, &ae) && ae.StatusCode == http.StatusServiceUnavailable) {
			unreachable++
		}
	}
	assert.Positive(t, unreachable)
}

// TestV0Stats: v0 mode posts /bots/:id/stats with the bot id from READY, the
// bare token, and the per-shard list when every shard is here.
func TestV0Stats(t *testing.T) {
	t.Parallel()
	botID := topggtest.DiscordBot().PlatformID
	t.Run("all shards", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, setup{shards: 2, perShard: 3, cfg: autopost.Config{Mode: autopost.ModeV0},
			dcOpts: []plugintest.Option{plugintest.WithBotUser(botID, "Example Bot")}})
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
		f := newFixture(t, setup{shards: 2, perShard: 3, open: []int{1},
			cfg:    autopost.Config{Mode: autopost.ModeV0, ShardCount: 2},
			dcOpts: []plugintest.Option{plugintest.WithBotUser(botID, "Example Bot")}})
		path := "/bots/" + botID + "/stats"
		require.Eventually(t, func() bool { return len(f.requests(http.MethodPost, path)) > 0 }, 5*time.Second, 5*time.Millisecond)
		assert.JSONEq(t, `{"server_count":3,"shard_id":1,"shard_count":2}`, string(f.requests(http.MethodPost, path)[0].Body))
	})
}

// TestLogsOnePlainLinePerPost checks the log: the short-interval warning, one
// line per post, and no token anywhere.
func TestLogsOnePlainLinePerPost(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	f := newFixture(t, setup{perShard: 2, cfg: autopost.Config{Logger: newTextLogger(&buf)}})
	f.waitPosted(2)
	require.Eventually(t, func() bool { return len(f.resultsCopy()) > 0 }, 5*time.Second, 5*time.Millisecond)
	f.poster.Stop()
	out := buf.String()
	assert.Contains(t, out, "post interval is below 15 minutes")
	assert.Contains(t, out, `msg="posted the server count to Top.gg" component=autopost servers=2 shards=1`)
	assert.NotContains(t, out, f.tg.Token())
}

// TestRunErrors: Run refuses to start twice or without sessions.
func TestRunErrors(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	p, err := autopost.New(client, autopost.Config{})
	require.NoError(t, err)
	require.ErrorIs(t, p.Run(t.Context()), autopost.ErrNoSessions)
	require.ErrorIs(t, p.Start(t.Context()), autopost.ErrNoSessions)
	_, err = autopost.New(nil, autopost.Config{})
	require.Error(t, err)
	_, err = autopost.New(client, autopost.Config{Interval: -time.Second})
	require.Error(t, err)

	f := newFixture(t, setup{perShard: 1})
	require.ErrorIs(t, f.poster.Start(t.Context()), autopost.ErrRunning)
	require.ErrorIs(t, f.poster.Run(t.Context()), autopost.ErrRunning)
}

// TestDetach: a detached session's guilds leave the counts; v1 then posts the
// partial total of the shards still attached, with a warning.
func TestDetach(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	f := newFixture(t, setup{shards: 2, perShard: 2, cfg: autopost.Config{Logger: newTextLogger(&buf)}})
	f.waitPosted(4)
	const partial = "only some of the bot's shards are attached here"
	assert.NotContains(t, buf.String(), partial, "every shard is attached")
	f.detach[1]()
	f.detach[1]() // twice is harmless
	c := f.poster.Counts()
	assert.Equal(t, 2, c.Servers)
	assert.Equal(t, []int{2, 0}, c.PerShard)
	f.waitPosted(2)
	// Events of the detached session no longer count.
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(60, 1)))
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(60, 0)))
	f.waitPosted(3)
	assert.Equal(t, 3, f.poster.Counts().Servers)
	assert.Contains(t, buf.String(), partial+"; the v1 server_count covers them only\" component=autopost attached=1 shards=2")
}
