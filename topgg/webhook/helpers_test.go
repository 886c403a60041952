package webhook_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// now is the fake clock's time: a whole second, so that the +-5 min
// boundaries fall on whole-second timestamps.
var now = time.Date(2026, 2, 9, 0, 47, 20, 0, time.UTC)

const (
	secretA = webhook.Secret("whs_4f1c2e9a7b3d4c5e8f90a1b2c3d4e5f6")
	secretB = webhook.Secret("whs_b7e2d9c0a1f34e5d6c7b8a9f0e1d2c3b")
	legacy  = webhook.Secret("v0-shared-secret-7f3a9c")
)

// voteBody is the signed v1 body of wire-values.md.
const voteBody = `{"type":"vote.create","data":{"id":"808499215864008704","weight":1,` +
	`"created_at":"2026-02-09T00:47:14.2510149+00:00","expires_at":"2026-02-09T12:47:14.2510149+00:00",` +
	`"project":{"id":"803190510032756736","type":"bot","platform":"discord","platform_id":"160105994217586689"},` +
	`"user":{"id":"900000000000000001","platform_id":"160105994217586689","name":"alice","avatar_url":"https://cdn.example/a.png"},` +
	`"query":{"ref":"abc"}}}`

// wantVote is voteBody's vote.
func wantVote() webhook.Vote {
	return webhook.Vote{
		Vote: topgg.Vote{
			UserID:     "900000000000000001",
			PlatformID: "160105994217586689",
			Weight:     1,
			CreatedAt:  time.Date(2026, 2, 9, 0, 47, 14, 251014900, time.UTC),
			ExpiresAt:  time.Date(2026, 2, 9, 12, 47, 14, 251014900, time.UTC),
		},
		Version:           1,
		ID:                "808499215864008704",
		UserName:          "alice",
		AvatarURL:         "https://cdn.example/a.png",
		ProjectID:         "803190510032756736",
		ProjectPlatformID: "160105994217586689",
		Query:             map[string]string{"ref": "abc"},
	}
}

// recorder keeps what the callbacks received.
type recorder struct {
	votes  testkit.Log[webhook.Vote]
	events testkit.Log[webhook.Event]

	mu      sync.Mutex
	voteErr error
}

func (r *recorder) onVote(_ context.Context, v webhook.Vote) error {
	r.votes.Add(v)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.voteErr
}

func (r *recorder) onEvent(_ context.Context, e webhook.Event) { r.events.Add(e) }

func (r *recorder) Votes() []webhook.Vote   { return r.votes.All() }
func (r *recorder) Events() []webhook.Event { return r.events.All() }

// config returns a Config with both callbacks on rec, secretA and
// secretB, and a fake clock at now.
func config(rec *recorder) (webhook.Config, *clock.Fake) {
	clk := clock.NewFake(now)
	cfg := webhook.Config{
		Secrets: []webhook.Secret{secretA, secretB},
		OnVote:  rec.onVote,
		OnEvent: rec.onEvent,
	}
	return webhook.WithClock(cfg, clk), clk
}

func newReceiver(t *testing.T, cfg webhook.Config) *webhook.Receiver {
	t.Helper()
	h, err := webhook.New(cfg)
	require.NoError(t, err)
	return h
}

// signed returns a v1 delivery of body signed with secret at t.
func signed(t *testing.T, secret webhook.Secret, at time.Time, body string) *http.Request {
	t.Helper()
	req, err := webhook.NewRequest(context.Background(), "http://127.0.0.1/topgg/webhook", secret, at, []byte(body))
	require.NoError(t, err)
	return req
}

// withHeader returns a delivery of body with the given signature header.
func withHeader(header, body string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/topgg/webhook", bytes.NewReader([]byte(body)))
	req.Header.Set(webhook.SignatureHeader, header)
	return req
}

func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// signRaw signs body with ts exactly as given, independently of Sign.
func signRaw(secret webhook.Secret, ts, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + body))
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}
