package voterewards_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

func TestActiveMatchesTheServiceVoteStatus(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	now := time.Now()
	vote := func(u int, ago time.Duration) topggtest.Vote {
		return topggtest.Vote{UserID: userID(u), PlatformID: platformID(u), CreatedAt: now.Add(-ago), Weight: 1 + u%2}
	}
	srv.AddVote(
		vote(1, time.Hour),                          // active
		vote(2, 12*time.Hour+30*time.Minute),        // expired
		vote(3, 20*time.Hour), vote(3, 2*time.Hour), // expired, then active
		vote(4, 23*time.Hour), vote(4, 11*time.Hour), // 12 h apart: the later counts
		vote(5, 11*time.Hour+59*time.Minute), // active for one more minute
	)
	client := newClient(t, srv)
	p := startPoller(t, client, voterewards.Config{OnReward: newRecorder().handle, Store: voterewards.NewMemoryStore(), Lookback: 24 * time.Hour})
	require.Eventually(t, func() bool { return p.Active(userID(1)).Covered }, 5*time.Second, 5*time.Millisecond)

	ctx := context.Background()
	for u := 1; u <= 6; u++ {
		for _, c := range []struct {
			id  string
			src topgg.UserIDKind
		}{{userID(u), topgg.UserIDTopgg}, {platformID(u), topgg.UserIDDiscord}} {
			want, err := client.VoteStatus(ctx, c.id, c.src)
			require.NoError(t, err)
			got := p.Active(c.id)
			assert.True(t, got.Covered)
			assert.Equal(t, want != nil, got.Active, "user %d by %s", u, c.src)
			if want != nil {
				assert.True(t, want.ExpiresAt.Equal(got.Until), "user %d by %s: service %s, cache %s", u, c.src, want.ExpiresAt, got.Until)
			} else {
				assert.Zero(t, got.Until, "user %d by %s", u, c.src)
			}
		}
	}
	assert.True(t, p.Active(userID(1)).Active, "the test has active users")
	assert.False(t, p.Active(userID(2)).Active, "the test has inactive users")
}

func TestActiveSaysWhenTheWindowIsNotCovered(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-30 * time.Minute)})
	rec := newRecorder()
	p, err := voterewards.New(newClient(t, srv), voterewards.Config{OnReward: rec.handle, Store: voterewards.NewMemoryStore(), Lookback: time.Hour, Interval: 10 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, voterewards.Status{}, p.Active(userID(1)), "nothing known before Run")
	stop := goRun(t, p.Run)
	t.Cleanup(func() { _ = stop() })
	requireExactlyOnce(t, srv, rec)
	// Read to the end, but only one hour of the twelve-hour window.
	st := p.Active(userID(1))
	assert.True(t, st.Active)
	assert.False(t, st.Covered)
}

// brokenFeed is a MemoryStore whose feed fails for good at once.
type brokenFeed struct{ *voterewards.MemoryStore }

var errFeedBroken = errors.New("feed broken")

func (brokenFeed) Follow(context.Context, func(voterewards.Vote), func()) error { return errFeedBroken }

// A Mirror whose feed fails for good must say so (and so be restarted by its
// supervisor), not sit with a cache that no longer learns anything until its
// context ends.
func TestMirrorReturnsWhenTheFeedFails(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	p, err := voterewards.New(newClient(t, srv), voterewards.Config{
		OnReward: newRecorder().handle, Store: brokenFeed{voterewards.NewMemory()},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Mirror(ctx) }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, errFeedBroken)
	case <-time.After(5 * time.Second):
		cancel()
		<-done
		t.Fatal("Mirror did not return within 5 s of its feed failing")
	}
}

// TestMirrorStartedBeforeTheLeaderIsCoveredWithinSeconds: a follower whose
// Mirror starts before the leader's first poll answers Covered within
// seconds of that poll, not after the next minute's prune (a vote-gated
// command would turn voters away in followers until then).
func TestMirrorStartedBeforeTheLeaderIsCoveredWithinSeconds(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	store := voterewards.NewMemoryStore()
	follower, err := voterewards.New(newClient(t, srv), voterewards.Config{OnReward: newRecorder().handle, Store: store})
	require.NoError(t, err)
	stop := goRun(t, follower.Mirror)
	t.Cleanup(func() { _ = stop() })
	require.False(t, follower.Active(platformID(1)).Covered)

	startPoller(t, newClient(t, srv), voterewards.Config{OnReward: newRecorder().handle, Store: store})
	assert.Eventually(t, func() bool { return follower.Active(platformID(1)).Covered }, 5*time.Second, 10*time.Millisecond,
		"the follower still says it is reading the history")
}
