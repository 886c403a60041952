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
