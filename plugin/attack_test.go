package plugin_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/voterewards"
)

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
	cfg.Autopost = plugin.AutopostOff
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

// deafStore is a memory store whose webhook Ingest blocks until released,
// whatever its context says.
type deafStore struct {
	memStore
	rel     *releaser
	entered chan struct{}
}

func (s *deafStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	if cp != nil { // the poll
		return s.memStore.Ingest(ctx, cp, votes, grace)
	}
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.rel.ch
	return nil, ctx.Err()
}

// TestWebhookStopIsBoundedWhenAHandlerIgnoresItsContext: a webhook delivery
// stuck in a Store that ignores its context holds Run for the server's
// shutdown grace (5 s) and one second more, not for ever. (This test waits
// out the 5 s.)
func TestWebhookStopIsBoundedWhenAHandlerIgnoresItsContext(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the webhook server's 5 s shutdown grace")
	}
	t.Parallel()
	store := &deafStore{memStore: newMemStore(), rel: newReleaser(t), entered: make(chan struct{}, 1)}
	var logs logBuffer
	cancel, ran, sent := runUntilStoreEntered(t, store, store.entered, logs.Logger())
	start := time.Now()
	cancel()
	select {
	case err := <-ran:
		require.NoError(t, err)
	case <-time.After(12 * time.Second):
		t.Fatal("Run waits for a webhook handler that ignores its context")
	}
	assert.Less(t, time.Since(start), 5*time.Second+time.Second+2*time.Second)
	assert.Contains(t, logs.String(), "webhook handlers ignored their cancelled context")
	store.rel.release()
	<-sent
}

// TestCommandSyncHandlerPanicIsContained: a CommandSyncHandler that panics
// does not make the finished sync a failed job (the supervisor would restart
// it and publish the commands again at every restart); the log names it.
func TestCommandSyncHandlerPanicIsContained(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	var logs logBuffer
	cfg := w.config()
	cfg.Autopost = plugin.AutopostOff
	var calls atomic.Int32
	p := w.plugin(cfg, plugin.WithCommands(botCommands()), plugin.WithLogger(logs.Logger()),
		plugin.WithCommandSyncHandler(func(context.Context, commands.Result, error) {
			calls.Add(1)
			panic("dashboard hook bug")
		}))
	w.start(p)
	w.open()
	require.Eventually(t, func() bool { return calls.Load() == 1 }, wait, tick)
	assert.Equal(t, 1, w.count(http.MethodPut, commandsPath))
	// The supervisor's first restart would come after about 1 s.
	assert.Never(t, func() bool { return w.count(http.MethodPut, commandsPath) > 1 || calls.Load() > 1 },
		2500*time.Millisecond, 50*time.Millisecond, "the sync ran again after the handler panicked")
	out := logs.String()
	assert.Contains(t, out, "OnResult panicked") // the handler is the command job's OnResult
	assert.Contains(t, out, "dashboard hook bug")
	assert.NotContains(t, out, "job panicked")
	assert.Equal(t, 0, strings.Count(out, "goroutine "), "no stack in the log")
}
