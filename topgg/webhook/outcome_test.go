package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// outcomes records what the Observer is told.
type outcomes struct{ testkit.Log[error] }

func (o *outcomes) last() error {
	all := o.All()
	if len(all) == 0 {
		return errors.New("none")
	}
	return all[len(all)-1]
}

// TestObserverSeesEveryOutcome: each answer of the Receiver is reported once,
// with the error that decided its status.
func TestObserverSeesEveryOutcome(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	cfg.LegacyAuth = legacy
	var obs outcomes
	cfg.Observer = obs.Add
	h := newReceiver(t, cfg)
	legacyReq := func(auth string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/topgg/webhook", strings.NewReader(`{"bot":"1","user":"2","type":"upvote"}`))
		req.Header.Set("Authorization", auth)
		return req
	}
	cases := []struct {
		name   string
		req    func() *http.Request
		before func()
		status int
		want   error
	}{
		{"accepted", func() *http.Request { return signed(t, secretA, now, voteBody) }, nil, http.StatusNoContent, nil},
		{"accepted-v0", func() *http.Request { return legacyReq(string(legacy)) }, nil, http.StatusNoContent, nil},
		{"no-signature", func() *http.Request {
			return httptest.NewRequest(http.MethodPost, "/topgg/webhook", strings.NewReader(voteBody))
		}, nil, http.StatusUnauthorized, webhook.ErrNoSignature},
		{"garbled", func() *http.Request { return withHeader("t=1", voteBody) }, nil, http.StatusUnauthorized, webhook.ErrMalformedSignature},
		{"wrong-secret", func() *http.Request { return signed(t, "whs_other", now, voteBody) }, nil, http.StatusForbidden, webhook.ErrSignatureMismatch},
		{"wrong-v0-auth", func() *http.Request { return legacyReq("nope") }, nil, http.StatusForbidden, webhook.ErrSignatureMismatch},
		{"stale", func() *http.Request { return signed(t, secretA, now.Add(-time.Hour), voteBody) }, nil, http.StatusForbidden, webhook.ErrTimestamp},
		{"malformed", func() *http.Request { return signed(t, secretA, now, `{"type":`) }, nil, http.StatusBadRequest, webhook.ErrMalformedBody},
		{"too-large", func() *http.Request {
			return signed(t, secretA, now, `{"x":"`+strings.Repeat("a", webhook.MaxBodyBytes)+`"}`)
		}, nil, http.StatusRequestEntityTooLarge, webhook.ErrBodyTooLarge},
		{"method", func() *http.Request { return httptest.NewRequest(http.MethodGet, "/topgg/webhook", nil) }, nil,
			http.StatusMethodNotAllowed, webhook.ErrMethodNotAllowed},
		{"store-failed", func() *http.Request { return signed(t, secretA, now, voteBody) },
			func() { rec.mu.Lock(); rec.voteErr = errDiskFull; rec.mu.Unlock() },
			http.StatusInternalServerError, errDiskFull},
		{"store-refused", func() *http.Request { return signed(t, secretA, now, voteBody) },
			func() { rec.mu.Lock(); rec.voteErr = webhook.ErrMalformedBody; rec.mu.Unlock() },
			http.StatusBadRequest, webhook.ErrMalformedBody},
	}
	for i, c := range cases {
		if c.before != nil {
			c.before()
		}
		w := serve(h, c.req())
		assert.Equal(t, c.status, w.Code, c.name)
		if c.want == nil {
			assert.NoError(t, obs.last(), c.name)
		} else {
			assert.ErrorIs(t, obs.last(), c.want, c.name)
		}
		assert.Len(t, obs.All(), i+1, "%s: one outcome per answer", c.name)
	}
}

var errDiskFull = errors.New("disk full")

// TestObserverPanicDoesNotChangeTheAnswer: a panicking Observer is logged;
// the delivery is answered and stored as without it.
func TestObserverPanicDoesNotChangeTheAnswer(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	var buf testlog.Buffer
	cfg.Logger = buf.Logger()
	cfg.Observer = func(error) { panic("observer bug") }
	h := newReceiver(t, cfg)
	w := serve(h, signed(t, secretA, now, voteBody))
	require.Equal(t, http.StatusNoContent, w.Code)
	assert.Len(t, rec.Votes(), 1)
	assert.Len(t, rec.Events(), 1, "OnEvent still runs")
	assert.Contains(t, buf.String(), "webhook callback panicked")
	assert.Contains(t, buf.String(), "callback=Observer")
}

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
		outcomes []error
	}{
		{"OnVote", voteBody, func(c *webhook.Config) {
			c.OnVote = func(context.Context, webhook.Vote) error { panic(panicValue) }
		}, http.StatusInternalServerError, []error{webhook.ErrPanicked}},
		{"OnIntegrationCreate", integration, func(c *webhook.Config) {
			c.OnIntegrationCreate = func(context.Context, webhook.IntegrationCreate) (webhook.IntegrationAnswer, error) {
				panic(panicValue)
			}
		}, http.StatusInternalServerError, []error{webhook.ErrPanicked}},
		{"OnEvent", voteBody, func(c *webhook.Config) {
			c.OnEvent = func(context.Context, webhook.Event) { panic(panicValue) }
		}, http.StatusNoContent, []error{nil, webhook.ErrPanicked}},
	} {
		t.Run(tc.callback, func(t *testing.T) {
			t.Parallel()
			cfg, _ := config(&recorder{})
			var logs testlog.Buffer
			cfg.Logger = logs.Logger()
			obs := &outcomes{}
			cfg.Observer = obs.Add
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
			assert.Eventually(t, func() bool { return slices.EqualFunc(obs.All(), want, errors.Is) }, 5*time.Second, 5*time.Millisecond, "the Observer did not count the panics")
			out := logs.String()
			assert.Contains(t, out, "webhook callback panicked")
			assert.Contains(t, out, "callback="+tc.callback)
			assert.Contains(t, out, panicValue)
			assert.Contains(t, out, "goroutine ", "the stack is in the log")
		})
	}
}
