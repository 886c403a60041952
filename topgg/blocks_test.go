package topgg_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// TestBlockSeenAfterLegacyWait: a v0 call that waits for a limiter slot while
// another call learns of a one-hour block is refused locally when its slot
// comes, not sent into the block.
func TestBlockSeenAfterLegacyWait(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	// The window is long enough that the blocker's late 429 (200 ms) always
	// arrives before the waiter's slot frees.
	const window = time.Second
	c := newClient(t, srv, topgg.WithLegacyLimit(2, window))
	l := c.Legacy()
	bot := srv.Project().PlatformID

	_, err := l.HasVoted(t.Context(), bot, "1") // first slot
	require.NoError(t, err)

	// The blocker takes the second slot; its answer, late, is a one-hour 429.
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/bots*", RetryAfter: time.Hour, Delay: 200 * time.Millisecond}))
	blocker := make(chan error, 1)
	go func() {
		_, err := l.Stats(t.Context(), bot)
		blocker <- err
	}()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 2 }, 5*time.Second, time.Millisecond)

	// The waiter finds the window full and waits for the first slot.
	start := time.Now()
	_, err = l.HasVoted(t.Context(), bot, "1")
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local, "the block must refuse the call locally: %v", err)
	require.Nil(t, rl.API)
	require.Greater(t, rl.RetryAfter, 59*time.Minute)
	require.GreaterOrEqual(t, time.Since(start), window/2, "the waiter must have waited for its slot first")

	err = <-blocker
	require.ErrorAs(t, err, &rl)
	require.False(t, rl.Local)
	require.Len(t, srv.Requests(), 2, "no request may go out after the block was recorded")
}

// TestBlockSeenBeforeRetry: a retry after backoff is not sent when another call
// has recorded a block of the same family in the meantime.
func TestBlockSeenBeforeRetry(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newClient(t, srv, topgg.WithRetryPolicy(topgg.RetryPolicy{
		MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: time.Second, MaxRetryAfter: 5 * time.Second,
	}))
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes/*", Status: 500}))
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me/votes", RetryAfter: time.Hour}))

	retrier := waitCall(t.Context(), c, voteStatus("1", ""))
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, time.Millisecond)

	// While the retrier backs off, a call of the same family learns of a block
	// (its Retry-After is over MaxRetryAfter, so it is not waited out).
	_, err := c.Votes(t.Context(), topgg.VotesQuery{StartDate: time.Now().Add(-time.Hour)})
	var rl *topgg.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.False(t, rl.Local)
	require.Len(t, srv.Requests(), 2)

	select {
	case err = <-retrier:
	case <-time.After(10 * time.Second):
		t.Fatal("the retrier did not finish")
	}
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Local, "the retry must be refused locally: %v", err)
	require.Len(t, srv.Requests(), 2, "the retry must not be sent into the block")
}
