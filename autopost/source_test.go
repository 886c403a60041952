package autopost_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// tableSource is a Source whose counts the test sets, the way a fleet's
// aggregator reads them from a shared store: it has no Changed channel.
type tableSource struct {
	mu     sync.Mutex
	counts autopost.Counts
	err    error
	reads  int
}

func (s *tableSource) set(c autopost.Counts, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts, s.err = c, err
}

func (s *tableSource) Counts(ctx context.Context) (autopost.Counts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	return s.counts, s.err
}

func (s *tableSource) Changed() <-chan struct{} { return nil }

func (s *tableSource) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// TestPostsWhatTheSourceGives: with another Source, the first post waits
// until it has every shard (asking again on the clock, since it has no
// Changed channel), an error of the Source is reported and retried, and the
// exact total is posted; v0 posts its per-shard list.
func TestPostsWhatTheSourceGives(t *testing.T) {
	t.Parallel()
	for name, mode := range map[string]autopost.Mode{"v1": autopost.ModeV1, "v0": autopost.ModeV0} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tg, err := topggtest.NewServer()
			require.NoError(t, err)
			t.Cleanup(tg.Close)
			client, err := tg.NewClient()
			require.NoError(t, err)
			src := &tableSource{}
			src.set(autopost.Counts{Servers: 5, Shards: 3, PerShard: []int{5, 0, 0}, Missing: []int{1, 2}, BotID: topggtest.DiscordBot().PlatformID}, nil)
			clk := newClock()
			results := make(chan autopost.Result, 100)
			p, err := autopost.New(client, autopost.WithClock(autopost.Config{
				Mode: mode, Source: src, Interval: 16 * time.Minute,
				OnPost: func(r autopost.Result) { results <- r },
			}, clk))
			require.NoError(t, err)
			_, err = p.Attach()
			require.ErrorIs(t, err, autopost.ErrNoCounter)
			assert.Nil(t, autopost.CounterOf(p))

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()
			t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

			// Incomplete: asked again each minute (a sixteenth of the interval).
			waitTimers := func() {
				require.Eventually(t, func() bool { return clk.Timers() == 2 }, 5*time.Second, time.Millisecond)
			}
			waitTimers()
			reads := src.readCount()
			clk.Advance(time.Minute)
			require.Eventually(t, func() bool { return src.readCount() == reads+1 }, 5*time.Second, time.Millisecond)
			src.set(autopost.Counts{}, errors.New("store unreachable"))
			waitTimers()
			clk.Advance(time.Minute)
			waitTimers()
			assert.Empty(t, tg.Requests(), "nothing posted while incomplete or failing")

			src.set(autopost.Counts{Servers: 12, Shards: 3, PerShard: []int{5, 4, 3}, BotID: topggtest.DiscordBot().PlatformID}, nil)
			clk.Advance(time.Minute)
			r := <-results
			require.NoError(t, r.Err)
			assert.Equal(t, 12, r.Servers)
			assert.Equal(t, 3, r.Shards)
			if mode == autopost.ModeV1 {
				require.Len(t, tg.Metrics(), 1)
				assert.Equal(t, map[string]int{"server_count": 12, "shard_count": 3}, tg.Metrics()[0].Metrics)
				return
			}
			reqs := tg.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, http.MethodPost, reqs[0].Method)
			assert.JSONEq(t, `{"server_count":12,"shards":[5,4,3],"shard_count":3}`, string(reqs[0].Body))
		})
	}
}

// TestSourceConfigErrors: a typed nil Source, or a ShardCount beside a
// Source, is a ConfigError naming the field.
func TestSourceConfigErrors(t *testing.T) {
	t.Parallel()
	client, err := topgg.New("token")
	require.NoError(t, err)
	var typedNil *tableSource
	_, err = autopost.New(client, autopost.Config{Source: typedNil})
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "autopost.Config.Source", ce.Field)
	_, err = autopost.New(client, autopost.Config{Source: &tableSource{}, ShardCount: 2})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "autopost.Config.ShardCount", ce.Field)
}
