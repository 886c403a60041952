package testkit

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/topgg/webhook"
)

// Receiver is a webhook receiver of package webhook on a real HTTP server
// that keeps what it was sent.
type Receiver struct {
	URL    string
	votes  Log[webhook.Vote]
	events Log[webhook.Event]
}

// NewReceiver serves webhook.New(cfg), its OnVote and OnEvent replaced by
// the Receiver's, until the end of the test.
func NewReceiver(t testing.TB, cfg webhook.Config) *Receiver {
	t.Helper()
	r := &Receiver{}
	cfg.OnVote = func(_ context.Context, v webhook.Vote) error { r.votes.Add(v); return nil }
	cfg.OnEvent = func(_ context.Context, e webhook.Event) { r.events.Add(e) }
	h, err := webhook.New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Votes returns the votes received so far.
func (r *Receiver) Votes() []webhook.Vote { return r.votes.All() }

// Events returns the other events received so far.
func (r *Receiver) Events() []webhook.Event { return r.events.All() }
