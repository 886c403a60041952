package plugin_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestStopGraceCancelsHandlers: a reward handler that runs until its
// context is cancelled holds Run's return for about Config.VoteStopGrace, not the 10 s
// default; the handler sees its context cancelled, and the poller's close
// error reaches the log as a warning instead of vanishing in the supervisor.
func TestStopGraceCancelsHandlers(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	w := newWorld(t, worldSpec{})
	w.tg.AddVote(votes(1)...)
	cfg := w.config()
	cfg.Autopost = "off"
	cfg.SyncCommands = new(false)
	cfg.VoteStopGrace = timeout

	entered := make(chan struct{})
	var once sync.Once
	cancelled := make(chan error, 1)
	stubborn := func(ctx context.Context, _ voterewards.Vote) error {
		once.Do(func() { close(entered) })
		<-ctx.Done()
		select {
		case cancelled <- ctx.Err():
		default:
		}
		return ctx.Err()
	}
	var logs logBuffer
	p := w.plugin(cfg, plugin.WithRewardHandler(stubborn),
		plugin.WithLogger(logs.Logger()))
	w.start(p)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the reward handler was never called")
	}

	start := time.Now()
	require.NoError(t, w.stop(p), "a cancelled handler is not Run's error")
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, timeout, "Close let the handler run for the close timeout")
	// Far below the 10 s default, so this fails if the option is not passed on.
	assert.Less(t, took, timeout+5*time.Second)

	select {
	case err := <-cancelled:
		assert.ErrorIs(t, err, context.Canceled, "the handler saw its context cancelled")
	default:
		t.Fatal("the handler returned without its context being cancelled")
	}
	out := logs.String()
	// voterewards.Poller.Run returns nil after a stop, handlers cancelled or
	// not (the grace period is a promise, not a failure); it says so in the log.
	assert.Contains(t, out, "after the grace period; cancelling them")
}

// TestCleanCloseLogsNoStopError: when the handlers finish in time, stopping
// is not reported as an error.
func TestCleanCloseLogsNoStopError(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	w.tg.AddVote(votes(3)...)
	cfg := w.config()
	rewards := newRecorder()
	var logs logBuffer
	p := w.plugin(cfg, plugin.WithCommands(botCommands()), plugin.WithRewardHandler(rewards.handle),
		plugin.WithLogger(logs.Logger()))
	w.start(p)
	w.open()
	w.requirePublished(botCommands())
	require.Eventually(t, func() bool { return rewards.distinct() == 3 }, wait, tick)
	require.NoError(t, w.stop(p))
	assert.NotContains(t, logs.String(), "job stopped with an error")
}

// releaser is a channel that code ignoring its context blocks on, closed at
// the end of the test (before goleak looks) or earlier.
type releaser struct {
	ch   chan struct{}
	once sync.Once
}

func newReleaser(t *testing.T) *releaser {
	r := &releaser{ch: make(chan struct{})}
	t.Cleanup(r.release)
	return r
}

func (r *releaser) release() { r.once.Do(func() { close(r.ch) }) }

// TestVoteStopGraceHoldsWhenAHandlerIgnoresItsContext: Config.VoteStopGrace
// bounds the stop even when the reward handler never looks at its context:
// Run returns within the grace period plus voterewards.CancelWait.
func TestVoteStopGraceHoldsWhenAHandlerIgnoresItsContext(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	w := newWorld(t, worldSpec{})
	w.tg.AddVote(votes(1)...)
	cfg := w.config()
	cfg.Autopost = "off"
	cfg.SyncCommands = new(false)
	cfg.VoteStopGrace = grace
	rel := newReleaser(t)
	entered := make(chan struct{}, 1)
	deaf := func(context.Context, voterewards.Vote) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-rel.ch // ignores ctx
		return nil
	}
	var logs logBuffer
	p := w.plugin(cfg, plugin.WithRewardHandler(deaf), plugin.WithLogger(logs.Logger()))
	w.start(p)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the reward handler was never called")
	}
	start := time.Now()
	require.NoError(t, w.stop(p))
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, grace)
	assert.Less(t, took, grace+voterewards.CancelWait+2*time.Second, "the stop waited for a handler that ignores its context")
	assert.Contains(t, logs.String(), "ignored their cancelled context")
}
