package autopost_test

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
	"github.com/dblkit/go-topgg/internal/serverproc"
	"github.com/dblkit/go-topgg/topgg"
)

// TestAttachRefusesWhatWouldNeverCount: a session that would silently count
// nothing is refused with a named error, and nothing of the call is
// attached.
func TestAttachRefusesWhatWouldNeverCount(t *testing.T) {
	t.Parallel()
	dc, err := discordtest.NewServer(discordtest.WithShardCount(2), discordtest.WithGuilds(discordtest.GuildIDForShard(0, 0, 2)))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	newSession := func(id int) *discordgo.Session {
		s, err := dc.NewSession(id, 2)
		require.NoError(t, err)
		return s
	}

	c := autopost.NewCounter(2)
	_, err = c.Attach(nil)
	require.ErrorIs(t, err, topgg.ErrNilArgument)

	noIntent := newSession(0)
	noIntent.Identify.Intents = discordgo.IntentsGuildMessages
	_, err = c.Attach(noIntent)
	require.ErrorIs(t, err, autopost.ErrNoGuildsIntent)

	// All or nothing: a bad session refuses the whole call.
	good := newSession(0)
	_, err = c.Attach(good, nil)
	require.ErrorIs(t, err, topgg.ErrNilArgument)
	assert.Zero(t, autopost.Attached(c))

	// Twice, or two sessions of one shard, or a shard beyond the count.
	detach, err := c.Attach(good)
	require.NoError(t, err)
	_, err = c.Attach(good)
	require.ErrorIs(t, err, autopost.ErrAttachedTwice)
	_, err = c.Attach(newSession(0))
	require.ErrorIs(t, err, autopost.ErrAttachedTwice)
	_, err = c.Attach(newSession(1), newSession(1))
	require.ErrorIs(t, err, autopost.ErrAttachedTwice)
	_, err = autopost.NewCounter(1).Attach(newSession(1))
	require.ErrorIs(t, err, autopost.ErrAttachedTwice)
	assert.Equal(t, 1, autopost.Attached(c))
	detach()
	assert.Zero(t, autopost.Attached(c))

	// Open: READY already missed. Closed after an Open: the next Open
	// resumes, with no READY either.
	open := newSession(0)
	require.NoError(t, open.Open())
	_, err = c.Attach(open)
	require.ErrorIs(t, err, autopost.ErrSessionOpen)
	require.NoError(t, open.Close())
	_, err = c.Attach(open)
	require.ErrorIs(t, err, autopost.ErrSessionOpen)
	assert.Zero(t, autopost.Attached(c), "a refused session is not attached")
	counts, err := c.Counts(t.Context())
	require.NoError(t, err)
	assert.Zero(t, counts.Servers, "a refused session's READY does not count")
}

// TestAttachRacingOpen: an Open running while Attach is called is either
// refused or counted, never silently missed.
func TestAttachRacingOpen(t *testing.T) {
	t.Parallel()
	dc, err := discordtest.NewServer(discordtest.WithGuilds(discordtest.GuildIDForShard(0, 0, 1), discordtest.GuildIDForShard(1, 0, 1)))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	var closers sync.WaitGroup
	t.Cleanup(closers.Wait)
	for range 10 {
		s, err := dc.NewSession(0, 1)
		require.NoError(t, err)
		c := autopost.NewCounter(1)
		opened := make(chan error, 1)
		go func() { opened <- s.Open() }()
		_, err = c.Attach(s)
		var ranErr error
		serverproc.Within("the job to return (<-opened)", func() { ranErr = <-opened })
		require.NoError(t, ranErr)
		closers.Go(func() { _ = s.Close() })
		if err != nil {
			require.ErrorIs(t, err, autopost.ErrSessionOpen)
			continue
		}
		require.Eventually(t, func() bool {
			counts, err := c.Counts(t.Context())
			return err == nil && counts.Complete() && counts.Servers == 2
		}, 5*time.Second, time.Millisecond, "attached before READY: counted")
	}
}

// TestAttachWhileRunning: a session attached while the Poster runs (before
// it opens) completes the counts, and the exact total goes out.
func TestAttachWhileRunning(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{shards: 2, perShard: 2, open: []int{0}, idle: []int{}, cfg: autopost.Config{ShardCount: 2}})
	require.Eventually(t, func() bool { return f.counts().Servers == 2 }, 5*time.Second, time.Millisecond)
	assert.Empty(t, f.tg.Requests(), "shard 1 is missing")
	sess, err := f.dc.NewSession(1, 2)
	require.NoError(t, err)
	f.detach[1], err = f.poster.Attach(sess)
	require.NoError(t, err)
	f.sessions[1] = sess
	require.NoError(t, sess.Open())
	f.waitPosted(4)
	assert.Equal(t, 4, f.patches()[0].Metrics["server_count"])
}

// TestZeroCounterWorks: the zero Counter counts like NewCounter(0), and a
// nil one fails instead of panicking.
func TestZeroCounterWorks(t *testing.T) {
	t.Parallel()
	dc, err := discordtest.NewServer(discordtest.WithGuilds(discordtest.GuildIDForShard(0, 0, 1)))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	var c autopost.Counter
	s, err := dc.NewSession(0, 1)
	require.NoError(t, err)
	detach, err := c.Attach(s)
	require.NoError(t, err)
	t.Cleanup(detach)
	changed := c.Changed()
	require.NoError(t, s.Open())
	t.Cleanup(func() { _ = s.Close() })
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("Changed not closed on READY")
	}
	require.Eventually(t, func() bool {
		counts, err := c.Counts(t.Context())
		return err == nil && counts.Complete() && counts.Servers == 1 && counts.Unavailable == 0
	}, 5*time.Second, time.Millisecond, "READY's stub, then its lazy GUILD_CREATE")
	assert.Equal(t, []autopost.ShardStats{{ID: 0, Servers: 1, Ready: true}}, c.AppendShards(nil))

	var nilCounter *autopost.Counter
	_, err = nilCounter.Attach(s)
	require.ErrorIs(t, err, topgg.ErrNotConfigured)
	_, err = nilCounter.Counts(context.Background())
	require.ErrorIs(t, err, topgg.ErrNotConfigured)
}
