package voterewards_test

import (
	"context"
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
			assert.Equal(t, want.Voted, got.Active, "user %d by %s", u, c.src)
			assert.True(t, want.ExpiresAt.Equal(got.Until), "user %d by %s: service %s, cache %s", u, c.src, want.ExpiresAt, got.Until)
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
