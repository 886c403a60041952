package plugin

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// TestWebhookJobRestartsOnANewListener: a webhook server whose listener failed
// is restarted by the supervisor on a new listener of the same address, not on
// the closed one (which would fail in a loop).
func TestWebhookJobRestartsOnANewListener(t *testing.T) {
	t.Parallel()
	p, addr := webhookOnly(t)

	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, dead.Close()) // the first server fails at once
	job := p.webhookJob(dead)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.Error(t, job(ctx), "serving on a closed listener fails")

	done := make(chan error, 1)
	go func() { done <- job(ctx) }()
	hc := &http.Client{Timeout: 2 * time.Second} // every wait bounded
	require.Eventually(t, func() bool {
		resp, err := hc.Post("http://"+addr+defaultWebhookPath, "application/json", nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized // no signature: the receiver answers
	}, 5*time.Second, 10*time.Millisecond, "the restarted job does not serve")
	cancel()
	assert.NoError(t, testkit.Recv(t, done, "the webhook job did not stop"))
}

// TestRunStoppedBeforeServingFreesTheWebhookPort: a Run whose context is done
// before the webhook job first runs (the supervisor starts none then) still
// frees the port it bound, which a restarted Run on the address needs.
func TestRunStoppedBeforeServingFreesTheWebhookPort(t *testing.T) {
	t.Parallel()
	p, addr := webhookOnly(t)

	done, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, p.Run(done))
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err, "Run left the webhook port bound")
	require.NoError(t, l.Close())
}

// webhookOnly returns a plugin that serves webhooks only, on a free address.
func webhookOnly(t *testing.T) (*Plugin, string) {
	t.Helper()
	client, err := topgg.New("token", topgg.WithBaseURL("http://127.0.0.1:1"))
	require.NoError(t, err)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := free.Addr().String()
	require.NoError(t, free.Close())
	p, err := New(client, Config{Autopost: "off", SyncCommands: new(false),
		WebhookAddr: addr, WebhookSecrets: WebhookSecrets{"whs_test"}},
		WithState(voterewards.NewMemoryStore()), WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	return p, addr
}
