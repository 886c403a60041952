package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// panicValue is what the callbacks panic with: it must reach the log, never
// the peer.
const panicValue = "callback bug 7c1e"

// TestCallbackPanicIsContainedAtTheWire: a panic in any callback the
// Receiver calls reaches a real HTTP client as the answer an error would
// give (500 before the answer; after it, the 204 stands), never as a dropped
// connection; the Observer counts it, the log names the callback and holds
// the stack, and nothing of the panic reaches the peer.
func TestCallbackPanicIsContainedAtTheWire(t *testing.T) {
	t.Parallel()
	integration := `{"type":"integration.create","data":{"connection_id":"112402021105124","webhook_secret":"whs_abcd",` +
		`"project":{"id":"1"},"user":{"id":"2"}}}`
	for _, tc := range []struct {
		callback string
		body     string
		set      func(*webhook.Config)
		status   int
		outcomes []webhook.Outcome
	}{
		{"OnVote", voteBody, func(c *webhook.Config) {
			c.OnVote = func(context.Context, webhook.Vote) error { panic(panicValue) }
		}, http.StatusInternalServerError, []webhook.Outcome{webhook.OutcomePanic}},
		{"OnIntegrationCreate", integration, func(c *webhook.Config) {
			c.OnIntegrationCreate = func(context.Context, webhook.IntegrationCreate) (webhook.IntegrationAnswer, error) {
				panic(panicValue)
			}
		}, http.StatusInternalServerError, []webhook.Outcome{webhook.OutcomePanic}},
		{"OnEvent", voteBody, func(c *webhook.Config) {
			c.OnEvent = func(context.Context, webhook.Event) { panic(panicValue) }
		}, http.StatusNoContent, []webhook.Outcome{webhook.OutcomeAccepted, webhook.OutcomePanic}},
	} {
		t.Run(tc.callback, func(t *testing.T) {
			t.Parallel()
			cfg, _ := config(&recorder{})
			var logs testlog.Buffer
			cfg.Logger = logs.Logger()
			obs := &outcomes{}
			cfg.Observer = obs.observe
			tc.set(&cfg)
			srv := httptest.NewServer(newReceiver(t, cfg))
			t.Cleanup(srv.Close)
			client := srv.Client()
			client.Timeout = 5 * time.Second

			for range 2 { // the server still serves after a panic
				req, err := webhook.NewRequest(context.Background(), srv.URL, secretA, now, []byte(tc.body))
				require.NoError(t, err)
				resp, err := client.Do(req)
				require.NoError(t, err, "the connection was dropped: Top.gg would not retry")
				answer, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				assert.Equal(t, tc.status, resp.StatusCode)
				for _, leak := range []string{panicValue, "goroutine", "panic", ".go:"} {
					assert.NotContains(t, string(answer), leak, "the answer carries the panic")
				}
			}
			want := slices.Concat(tc.outcomes, tc.outcomes)
			assert.Eventually(t, func() bool {
				obs.mu.Lock()
				defer obs.mu.Unlock()
				return slices.Equal(obs.all, want)
			}, 5*time.Second, 5*time.Millisecond, "the Observer did not count the panics")
			out := logs.String()
			assert.Contains(t, out, "webhook callback panicked")
			assert.Contains(t, out, "callback="+tc.callback)
			assert.Contains(t, out, panicValue)
			assert.Contains(t, out, "goroutine ", "the stack is in the log")
		})
	}
}
