package voterewards_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestNoHandlerCallOnceTheTermEnded: a fleet leader's term deadline passes
// during its first reward handler call (a pause), while nothing has
// cancelled its context yet: no other handler is called and no further
// history request is sent in that Run, whatever timers were due (the first
// check that fails ends the term, and so the Run); the votes stay pending,
// and the next Run (the next leader) rewards each of them once.
func TestNoHandlerCallOnceTheTermEnded(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	for u := range 5 {
		srv.AddVote(topggtest.Vote{UserID: userID(u), PlatformID: platformID(u), Weight: 1,
			CreatedAt: time.Now().Add(-time.Hour), ExpiresAt: time.Now().Add(11 * time.Hour)})
	}
	store := voterewards.NewMemoryStore()
	rec := newRecorder()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	start := time.Unix(1_700_000_000, 0)
	clk := clock.NewFake(start) // the term's clock: no timer of its own fires
	tm := clock.NewTerm(clk, start.Add(time.Second), cancel)
	p, err := voterewards.New(newClient(t, srv), voterewards.Config{Store: store, Concurrency: 1,
		Interval: 10 * time.Millisecond, RetryDelay: time.Millisecond,
		OnReward: func(ctx context.Context, v voterewards.Vote) error {
			clk.Advance(time.Second) // a pause: the deadline passes during this call
			polls := len(votesRequests(srv))
			time.Sleep(30 * time.Millisecond) // three poll intervals: due, and never sent
			assert.Equal(t, polls, len(votesRequests(srv)), "a poll went out after the term ended")
			return rec.handle(ctx, v)
		}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- p.Run(clock.WithTerm(ctx, tm)) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run went on after its term ended")
	}
	require.Equal(t, 1, rec.total(), "a handler was called after the term ended")

	// The next leader (no term here: one process) rewards the others, once each.
	next, err := voterewards.New(newClient(t, srv), voterewards.Config{Store: store, Interval: 10 * time.Millisecond,
		OnReward: rec.handle})
	require.NoError(t, err)
	stop := goRun(t, next.Run)
	defer func() { _ = stop() }()
	requireExactlyOnce(t, srv, rec)
}
