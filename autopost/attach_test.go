package autopost_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testkit"
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
		httpx.Within("the job to return (<-opened)", func() { ranErr = <-opened })
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
	f.attach(1)
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
	testkit.Recv(t, changed, "Changed not closed on READY")
	require.Eventually(t, func() bool {
		counts, err := c.Counts(t.Context())
		return err == nil && counts.Complete() && counts.Servers == 1 && counts.Unavailable == 0
	}, 5*time.Second, time.Millisecond, "READY's stub, then its lazy GUILD_CREATE")
	assert.Equal(t, []autopost.ShardStats{{ID: 0, Servers: 1, Ready: true}}, c.AppendShards(nil))
}

// TestDetachAllPostsNothing: with every session detached there is nothing
// to count, so nothing is posted (not a server_count of 0); the attempts are
// reported as skipped. The numbers last posted stay the reference: a session
// attached again with the same guilds is not posted again, a change is.
func TestDetachAllPostsNothing(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	f := newFixture(t, setup{perShard: 2, cfg: autopost.Config{Logger: newTextLogger(&buf)}})
	f.waitPosted(2)
	f.detach[0]()
	from := len(f.resultsCopy())
	// An unchanged result may still come from counts read just before the
	// detach: the incomplete ones are the detach's.
	since := func(from int, o autopost.Outcome) []autopost.Result {
		var out []autopost.Result
		for _, r := range f.resultsCopy()[from:] {
			if r.Outcome == o {
				out = append(out, r)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(since(from, autopost.OutcomeIncomplete)) >= 3 }, 5*time.Second, 5*time.Millisecond)
	for _, m := range f.patches() {
		assert.NotZero(t, m.Metrics["server_count"], "server_count 0 posted: %v", f.patches())
	}
	for _, r := range since(from, autopost.OutcomeIncomplete) {
		assert.NoError(t, r.Err)
		assert.Zero(t, r.Servers, "%+v", r)
	}
	assert.Contains(t, buf.String(), `msg="not every shard has reported; nothing posted" component=autopost missing=[0] shards=1`)

	// A new session for the same shard, with the same guilds: the numbers
	// are those of the last post, so they are not sent again.
	f.attach(0)
	from = len(f.resultsCopy())
	require.Eventually(t, func() bool {
		for _, r := range since(from, autopost.OutcomeUnchanged) {
			if r.Servers == 2 {
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "the unchanged numbers are skipped")
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(40, 0)))
	f.waitPosted(3)
	var posted []int
	for _, m := range f.patches() {
		posted = append(posted, m.Metrics["server_count"])
	}
	assert.Equal(t, []int{2, 3}, posted, "nothing posted while detached, 2 not posted again")
}

// TestDetachOneOfTwoPostsNothing: detaching one shard of two leaves the
// other's guilds only, a partial total, so nothing is posted (it used to
// post the partial total with a warning); the skipped attempts name the
// missing shard, and the total is posted again once it is back.
func TestDetachOneOfTwoPostsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{shards: 2, perShard: 2})
	f.waitPosted(4)
	f.detach[1]()
	f.detach[1]() // twice is harmless
	counts, err := autopost.CounterOf(f.poster).Counts(f.ctx())
	require.NoError(t, err)
	assert.Equal(t, []int{1}, counts.Missing)
	assert.Equal(t, []int{2, 0}, counts.PerShard)
	from := len(f.resultsCopy())
	require.Eventually(t, func() bool {
		n := 0
		for _, r := range f.resultsCopy()[from:] {
			if r.Outcome == autopost.OutcomeIncomplete && slices.Equal(r.Missing, []int{1}) {
				n++
			}
		}
		return n >= 3
	}, 5*time.Second, 5*time.Millisecond)
	for _, m := range f.patches() {
		assert.Equal(t, 4, m.Metrics["server_count"], "a partial total was posted: %v", f.patches())
	}

	// Events of the detached session no longer count; a new session for
	// shard 1 brings its guilds back, and the exact total goes out.
	require.NoError(t, f.dc.Join(f.ctx(), f.guild(60, 1)))
	f.attach(1) // while Run runs: fine before Open
	f.waitPosted(5)
}

// TestChangedFiresOnEveryCountChange: Changed is closed by a guild joining,
// going into an outage, coming back and leaving, not only by READY, so
// that a fleet process publishes every change.
func TestChangedFiresOnEveryCountChange(t *testing.T) {
	t.Parallel()
	dc, err := discordtest.NewServer(discordtest.WithGuilds(discordtest.GuildIDForShard(0, 0, 1)))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	c := autopost.NewCounter(1)
	s, err := dc.NewSession(0, 1)
	require.NoError(t, err)
	detach, err := c.Attach(s)
	require.NoError(t, err)
	t.Cleanup(detach)
	require.NoError(t, s.Open())
	t.Cleanup(func() { _ = s.Close() })
	// state is what each step changes: the servers, and those in an outage.
	state := func() [2]int {
		counts, err := c.Counts(context.Background())
		require.NoError(t, err)
		return [2]int{counts.Servers, counts.Unavailable}
	}
	require.Eventually(t, func() bool { return state() == [2]int{1, 0} }, 5*time.Second, time.Millisecond)

	ctx := context.Background()
	joined := discordtest.GuildIDForShard(1, 0, 1)
	for _, step := range []struct {
		name string
		do   func() error
		want [2]int
	}{
		{"join", func() error { return dc.Join(ctx, joined) }, [2]int{2, 0}},
		{"outage", func() error { return dc.Outage(ctx, joined) }, [2]int{2, 1}},
		{"restore", func() error { return dc.Restore(ctx, joined) }, [2]int{2, 0}},
		{"leave", func() error { return dc.Remove(ctx, joined) }, [2]int{1, 0}},
	} {
		changed := c.Changed()
		require.NoError(t, step.do(), step.name)
		// Another wake (a heartbeat-forced resume under load, say) may close
		// the channel before the step's event is applied: wait for the close
		// that comes with the step's counts, not merely the first one.
		deadline := time.After(5 * time.Second)
		for seen := false; !seen; {
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("Changed not closed by a %s (counts %v, want %v)", step.name, state(), step.want)
			}
			if seen = state() == step.want; !seen {
				changed = c.Changed()
				seen = state() == step.want // applied (and woken) between the two reads
			}
		}
	}
}
