package plugin_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

// slowStore is a memory store whose Ingest, once its context ends, takes a
// moment more to return (a commit finishing), and counts the calls in it.
type slowStore struct {
	memStore
	entered  chan struct{}
	inflight atomic.Int32
}

func (s *slowStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote) ([]voterewards.Vote, error) {
	if cp != nil { // the poll: not the call under test
		return s.memStore.Ingest(ctx, cp, votes)
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

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
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
	w := newWorld(t, worldSpec{})
	store := &slowStore{memStore: newMemStore(), entered: make(chan struct{}, 1)}
	addr := freeAddr(t)
	cfg := plugin.Config{
		Autopost: plugin.AutopostOff, SyncCommands: new(false), VotePollInterval: new(time.Hour),
		WebhookAddr: addr, WebhookSecrets: plugin.WebhookSecrets{testSecret},
	}
	p, err := plugin.New(w.client, cfg, plugin.WithLogger(slog.New(slog.DiscardHandler)),
		plugin.WithVoteStore(store), plugin.WithRewardHandler(func(context.Context, voterewards.Vote) error { return nil }))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()

	body := []byte(`{"type":"vote.create","data":{"id":"1","weight":1,"created_at":"` +
		time.Now().UTC().Format(time.RFC3339Nano) + `","expires_at":"` + time.Now().Add(12*time.Hour).UTC().Format(time.RFC3339Nano) +
		`","project":{"id":"2","type":"bot","platform":"discord","platform_id":"3"},"user":{"id":"4","platform_id":"5","name":"u","avatar_url":""}}}`)
	require.Eventually(t, func() bool { // the receiver listens
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		req, err := webhook.NewRequest(context.Background(), "http://"+addr+"/topgg/webhook", testSecret, time.Now(), body)
		if !assert.NoError(t, err) {
			return
		}
		// The answer does not matter: the server cuts the request off.
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
		}
	}()
	select {
	case <-store.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the webhook vote never reached the store")
	}
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
