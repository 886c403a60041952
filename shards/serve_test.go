package shards_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/shards"
)

// events records what happened, in order, from any goroutine.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) { e.mu.Lock(); defer e.mu.Unlock(); e.log = append(e.log, s) }
func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// TestServeStopsTheJobBeforeTheShards: Serve opens every shard against the
// fake Discord while the job runs; on the stop, the job's context ends while
// the gateway connections are still up, and they close only after it returned.
func TestServeStopsTheJobBeforeTheShards(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 2)
	var ev events
	for _, s := range w.group.Sessions() {
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.Ready) { ev.add("ready") })
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.Disconnect) { ev.add("disconnected") })
	}
	ctx, stop := context.WithCancel(w.ctx())
	errJob := errors.New("job's error")
	served := async(func() error {
		return w.group.Serve(ctx, func(ctx context.Context) error {
			<-ctx.Done()
			ev.add("job stopped")
			return errJob
		}, shards.Shutdown{})
	})
	require.Eventually(t, func() bool { return len(ev.get()) == 2 }, quick, 10*time.Millisecond, "both shards' READY")
	stop()
	err := within(t, served, "Serve")
	require.ErrorIs(t, err, errJob)
	// discordgo runs each handler in its own goroutine: a Disconnect fired by
	// Close may be handled just after Serve returned.
	require.Eventually(t, func() bool { return len(ev.get()) >= 5 }, quick, time.Millisecond, "both shards' Disconnect: %v", ev.get())
	assert.Equal(t, []string{"ready", "ready", "job stopped", "disconnected", "disconnected"}, ev.get())
	require.NoError(t, w.group.Close(), "Close after Serve")
}

// TestServeJobFailure: a job failing while the shards run stops Serve, which
// returns its error and closes the shards; the misuses are errors.
func TestServeJobFailure(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	errJob := errors.New("state directory in use")
	err := within(t, async(func() error {
		return w.group.Serve(w.ctx(), func(context.Context) error { return errJob }, shards.Shutdown{})
	}), "Serve")
	require.ErrorIs(t, err, errJob)
	require.ErrorIs(t, w.group.Open(w.ctx()), shards.ErrClosed)

	assert.Error(t, w.group.Serve(w.ctx(), nil, shards.Shutdown{}))
	assert.Error(t, w.group.Serve(w.ctx(), func(context.Context) error { return nil }, shards.Shutdown{Budget: -1}))
	var zero shards.Group
	assert.Panics(t, func() { _ = zero.Serve(w.ctx(), func(context.Context) error { return nil }, shards.Shutdown{}) })
}

// TestApplication reads the fake Discord's application: its ID is the bot's.
func TestApplication(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	app, err := w.group.Application(w.ctx())
	require.NoError(t, err)
	assert.Equal(t, w.srv.BotUserID(), app.ID)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = w.group.Application(ctx)
	require.ErrorIs(t, err, context.Canceled)
}
