package plugin_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/voterewards"
)

// slowStore is a memory store whose Ingest, once its context ends, takes a
// moment more to return (a commit finishing), and counts the calls in it.
type slowStore struct {
	memStore
	entered  chan struct{}
	inflight atomic.Int32
}

func (s *slowStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	if cp != nil { // the poll: not the call under test
		return s.memStore.Ingest(ctx, cp, votes, grace)
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	time.Sleep(300 * time.Millisecond) // the tail that must not outlive Run
	return nil, ctx.Err()
}

// TestWebhookRequestDoesNotOutliveRun: a delivery still being stored when the
// shutdown's grace ends is cut off, and Run returns only once its handler
// has returned: nothing of the webhook server outlives Run. (This test
// waits out the server's 5 s shutdown grace.)
func TestWebhookRequestDoesNotOutliveRun(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the webhook server's 5 s shutdown grace")
	}
	t.Parallel()
	store := &slowStore{memStore: newMemStore(), entered: make(chan struct{}, 1)}
	cancel, ran, sent := runUntilStoreEntered(t, store, store.entered, slog.New(slog.DiscardHandler))
	cancel()
	select {
	case err := <-ran:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
	}
	assert.Zero(t, store.inflight.Load(), "a webhook handler was still running when Run returned")
	<-sent
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
