package voterewards_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/voterewards"
)

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
