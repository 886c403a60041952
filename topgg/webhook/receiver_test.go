package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

func TestGoodSignatureIsStoredThenAnswered204(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	h := newReceiver(t, cfg)

	req := signed(t, secretA, now, voteBody)
	req.Header.Set(webhook.TraceHeader, "trace-1")
	w := serve(h, req)

	require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
	require.Equal(t, []webhook.Vote{wantVote()}, rec.Votes())
	events := rec.Events()
	require.Len(t, events, 1)
	assert.Equal(t, "vote.create", events[0].Type)
	assert.Equal(t, 1, events[0].Version)
	assert.Equal(t, "trace-1", events[0].Trace)
	assert.Equal(t, wantVote(), *events[0].Vote)
}

func TestSecondSecretOfTheSetIsAccepted(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	h := newReceiver(t, cfg)

	w := serve(h, signed(t, secretB, now, voteBody))
	require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
	assert.Len(t, rec.Votes(), 1)
}

// refused checks the status and that no callback ran.
func refused(t *testing.T, rec *recorder, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	assert.Equal(t, status, w.Code, w.Body.String())
	assert.Empty(t, rec.Votes(), "OnVote ran for a refused delivery")
	assert.Empty(t, rec.Events(), "OnEvent ran for a refused delivery")
}

func TestWrongSecretIs403(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	h := newReceiver(t, cfg)
	refused(t, rec, serve(h, signed(t, "whs_not_ours", now, voteBody)), http.StatusForbidden)
}

func TestTamperedBodyIs403(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	h := newReceiver(t, cfg)
	sig := webhook.Sign(secretA, now, []byte(voteBody))
	tampered := strings.Replace(voteBody, `"weight":1`, `"weight":2`, 1)
	refused(t, rec, serve(h, withHeader(sig, tampered)), http.StatusForbidden)

	// The timestamp is covered too: the same MAC under another t fails.
	_, mac, _ := strings.Cut(sig, ",")
	other := "t=" + itoa(now.Unix()-1) + "," + mac
	refused(t, rec, serve(h, withHeader(other, voteBody)), http.StatusForbidden)
}

func TestMissingSignatureIs401(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	h := newReceiver(t, cfg)
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(voteBody))
	refused(t, rec, serve(h, req), http.StatusUnauthorized)
}

func TestGarbledSignatureIs401(t *testing.T) {
	t.Parallel()
	good := webhook.Sign(secretA, now, []byte(voteBody))
	_, mac, _ := strings.Cut(good, ",")
	ts := "t=" + itoa(now.Unix())
	for name, header := range map[string]string{
		"empty":          "",
		"no timestamp":   mac,
		"no v1":          ts,
		"v0 only":        ts + ",v0=abcd",
		"not key=value":  ts + "," + strings.TrimPrefix(mac, "v1="),
		"short mac":      ts + ",v1=abcdef",
		"not hex":        ts + ",v1=" + strings.Repeat("zz", 32),
		"signed t":       "t=+" + itoa(now.Unix()) + "," + mac,
		"t not a number": "t=yesterday," + mac,
		"two t":          ts + "," + ts + "," + mac,
		"huge":           ts + "," + strings.Repeat(mac+",", 20),
		"bearer":         "Bearer " + string(secretA),
		"uppercase keys": "T=" + itoa(now.Unix()) + ",V1=" + strings.TrimPrefix(mac, "v1="),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			cfg, _ := config(rec)
			h := newReceiver(t, cfg)
			refused(t, rec, serve(h, withHeader(header, voteBody)), http.StatusUnauthorized)
		})
	}
}

func TestSignatureHeaderVariantsAreAccepted(t *testing.T) {
	t.Parallel()
	good := webhook.Sign(secretA, now, []byte(voteBody))
	ts, mac, _ := strings.Cut(good, ",")
	hexMAC := strings.TrimPrefix(mac, "v1=")
	for name, header := range map[string]string{
		"reversed":       mac + "," + ts,
		"spaces":         ts + ", " + mac,
		"several v1":     ts + ",v1=" + strings.Repeat("00", 32) + "," + mac,
		"unknown scheme": ts + ",v2=whatever," + mac,
		"uppercase hex":  ts + ",v1=" + strings.ToUpper(hexMAC),
		// The MAC covers the digits of t as sent.
		"leading zero in t": signRaw(secretA, "0"+itoa(now.Unix()), voteBody),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			cfg, _ := config(rec)
			h := newReceiver(t, cfg)
			w := serve(h, withHeader(header, voteBody))
			assert.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
			assert.Len(t, rec.Votes(), 1)
		})
	}
}

func TestTimestampBoundaries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		offset time.Duration // of the signature's t from now
		want   int
	}{
		{"5 min old", -5 * time.Minute, http.StatusNoContent},
		{"5 min 1 s old", -5*time.Minute - time.Second, http.StatusForbidden},
		{"5 min ahead", 5 * time.Minute, http.StatusNoContent},
		{"5 min 1 s ahead", 5*time.Minute + time.Second, http.StatusForbidden},
		{"a day old", -24 * time.Hour, http.StatusForbidden},
		{"epoch", -time.Duration(now.Unix()) * time.Second, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			cfg, _ := config(rec)
			h := newReceiver(t, cfg)
			w := serve(h, signed(t, secretA, now.Add(tc.offset), voteBody))
			if tc.want != http.StatusNoContent {
				refused(t, rec, w, tc.want)
				return
			}
			assert.Equal(t, tc.want, w.Code, w.Body.String())
			assert.Len(t, rec.Votes(), 1)
		})
	}
}

func TestTimestampWindowMovesWithTheClock(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, clk := config(rec)
	h := newReceiver(t, cfg)

	require.Equal(t, http.StatusNoContent, serve(h, signed(t, secretA, now.Add(-5*time.Minute), voteBody)).Code)
	// Half a second later the same t is just outside the 5 minutes.
	clk.Advance(500 * time.Millisecond)
	assert.Equal(t, http.StatusForbidden, serve(h, signed(t, secretA, now.Add(-5*time.Minute), voteBody)).Code)
	assert.Len(t, rec.Votes(), 1)
}

func TestLegacyAuthorization(t *testing.T) {
	t.Parallel()
	body := `{"bot":"264811613708746752","user":"160105994217586689","type":"upvote","isWeekend":true,"query":"?ref=abc&x=1"}`
	for _, tc := range []struct {
		name   string
		auth   string
		legacy bool // v0 configured
		want   int
	}{
		{"right secret", string(legacy), true, http.StatusNoContent},
		{"wrong secret", "v0-shared-secret-7f3a9d", true, http.StatusForbidden},
		{"prefix of the secret", string(legacy[:5]), true, http.StatusForbidden},
		{"bearer", "Bearer " + string(legacy), true, http.StatusForbidden},
		{"no Authorization", "", true, http.StatusUnauthorized},
		{"v0 not configured", string(legacy), false, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			cfg, _ := config(rec)
			if tc.legacy {
				cfg.LegacyAuth = legacy
			}
			h := newReceiver(t, cfg)
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			w := serve(h, req)
			if tc.want != http.StatusNoContent {
				refused(t, rec, w, tc.want)
				return
			}
			require.Equal(t, tc.want, w.Code, w.Body.String())
			require.Equal(t, []webhook.Vote{{
				Vote:              topgg.Vote{PlatformID: "160105994217586689", Weight: 2},
				ProjectPlatformID: "264811613708746752",
				Query:             map[string]string{"ref": "abc", "x": "1"},
			}}, rec.Votes())
			require.Len(t, rec.Events(), 1)
			assert.Equal(t, 0, rec.Events()[0].Version)
		})
	}
}

func TestV1DeliveryWithOnlyLegacyConfiguredIs403(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	cfg.Secrets, cfg.LegacyAuth = nil, legacy
	h := newReceiver(t, cfg)
	refused(t, rec, serve(h, signed(t, secretA, now, voteBody)), http.StatusForbidden)
}

// countingReader is an endless body that counts what was read from it.
type countingReader struct{ n int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	c.n += int64(len(p))
	return len(p), nil
}

func TestOversizedBodyIs413WithoutReadingItWhole(t *testing.T) {
	t.Parallel()
	t.Run("declared", func(t *testing.T) {
		t.Parallel()
		rec := &recorder{}
		cfg, _ := config(rec)
		h := newReceiver(t, cfg)
		body := &countingReader{}
		req := withHeader(webhook.Sign(secretA, now, nil), "")
		req.Body = io.NopCloser(body)
		req.ContentLength = webhook.MaxBodyBytes + 1
		refused(t, rec, serve(h, req), http.StatusRequestEntityTooLarge)
		assert.Zero(t, body.n, "a declared oversized body is refused before any byte is read")
	})
	t.Run("undeclared", func(t *testing.T) {
		t.Parallel()
		rec := &recorder{}
		cfg, _ := config(rec)
		cfg.LegacyAuth = legacy
		h := newReceiver(t, cfg)
		for _, req := range []*http.Request{
			withHeader(webhook.Sign(secretA, now, nil), ""),
			httptest.NewRequest(http.MethodPost, "/", nil),
		} {
			req.Header.Set("Authorization", string(legacy)) // used by the v0 request
			body := &countingReader{}
			req.Body = io.NopCloser(body) // endless: only the cap stops the read
			req.ContentLength = -1
			w := serve(h, req)
			refused(t, rec, w, http.StatusRequestEntityTooLarge)
			assert.Equal(t, int64(webhook.MaxBodyBytes+1), body.n, "the handler stops one byte past the cap")
			assert.Equal(t, "close", w.Header().Get("Connection"))
		}
	})
	t.Run("at the cap", func(t *testing.T) {
		t.Parallel()
		rec := &recorder{}
		cfg, _ := config(rec)
		h := newReceiver(t, cfg)
		body := voteBody + strings.Repeat(" ", webhook.MaxBodyBytes-len(voteBody))
		w := serve(h, signed(t, secretA, now, body))
		assert.Equal(t, http.StatusNoContent, w.Code, "a body of exactly MaxBodyBytes is read")
	})
}

func TestOversizedBodyOverTheWireIs413(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	srv := httptest.NewServer(newReceiver(t, cfg))
	t.Cleanup(srv.Close)

	body := bytes.Repeat([]byte(" "), 3<<20)
	req, err := webhook.NewRequest(context.Background(), srv.URL, secretA, now, body)
	require.NoError(t, err)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Empty(t, rec.Votes())
	assert.Empty(t, rec.Events())
}

func TestOtherMethodsAre405(t *testing.T) {
	t.Parallel()
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodHead, http.MethodDelete} {
		rec := &recorder{}
		cfg, _ := config(rec)
		h := newReceiver(t, cfg)
		req := signed(t, secretA, now, voteBody)
		req.Method = m
		w := serve(h, req)
		refused(t, rec, w, http.StatusMethodNotAllowed)
		assert.Equal(t, http.MethodPost, w.Header().Get("Allow"))
	}
}

func TestMalformedBodyIs400(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not JSON":            `{"type":"vote.create",`,
		"no type":             `{"data":{}}`,
		"array":               `[]`,
		"vote without user":   `{"type":"vote.create","data":{"id":"1","created_at":"2026-02-09T00:47:14Z","expires_at":"2026-02-09T12:47:14Z"}}`,
		"vote with bad time":  strings.Replace(voteBody, "2026-02-09T00:47:14.2510149+00:00", "yesterday", 1),
		"vote with int query": strings.Replace(voteBody, `"ref":"abc"`, `"ref":1`, 1),
		"empty":               ``,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			cfg, _ := config(rec)
			h := newReceiver(t, cfg)
			refused(t, rec, serve(h, signed(t, secretA, now, body)), http.StatusBadRequest)
		})
	}
}

func TestVoteNotStoredIs500AndNoEvent(t *testing.T) {
	t.Parallel()
	rec := &recorder{voteErr: errors.New("disk full")}
	cfg, _ := config(rec)
	h := newReceiver(t, cfg)
	w := serve(h, signed(t, secretA, now, voteBody))
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.NotContains(t, w.Body.String(), "disk full", "the store's error stays in the log")
	assert.Len(t, rec.Votes(), 1)
	assert.Empty(t, rec.Events(), "OnEvent runs only for accepted deliveries")
}

func TestOnEventRunsAfterTheAnswerReachedTopgg(t *testing.T) {
	t.Parallel()
	integration := `{"type":"integration.create","data":{"connection_id":"1","webhook_secret":"whs_x"}}`
	for name, tc := range map[string]struct {
		body   string
		status int
	}{
		"vote":               {voteBody, http.StatusNoContent},
		"integration answer": {integration, http.StatusOK},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			done := make(chan struct{})
			cfg, _ := config(&recorder{})
			cfg.OnIntegrationCreate = func(context.Context, webhook.IntegrationCreate) (webhook.IntegrationAnswer, error) {
				return webhook.IntegrationAnswer{WebhookURL: "https://bot.example/hook"}, nil
			}
			cfg.OnEvent = func(ctx context.Context, e webhook.Event) {
				defer close(done)
				<-release
				assert.NoError(t, ctx.Err(), "OnEvent's context is not cancelled when Top.gg hangs up")
			}
			srv := httptest.NewServer(newReceiver(t, cfg))
			t.Cleanup(srv.Close)
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(release) }) }) // never leave OnEvent blocked

			answered := make(chan int, 1)
			go func() {
				req, err := webhook.NewRequest(context.Background(), srv.URL, secretA, now, []byte(tc.body))
				if !assert.NoError(t, err) {
					return
				}
				resp, err := srv.Client().Do(req)
				if !assert.NoError(t, err) {
					return
				}
				_, err = io.ReadAll(resp.Body) // the whole answer, not only its headers
				assert.NoError(t, err)
				_ = resp.Body.Close()
				answered <- resp.StatusCode
			}()
			select {
			case status := <-answered:
				assert.Equal(t, tc.status, status)
			case <-time.After(5 * time.Second):
				t.Fatal("no complete answer while OnEvent runs")
			}
			srv.CloseClientConnections() // Top.gg hangs up
			once.Do(func() { close(release) })
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("OnEvent did not return")
			}
		})
	}
}

func TestIntegrationCreateIsAnswered(t *testing.T) {
	t.Parallel()
	body := `{"type":"integration.create","data":{"connection_id":"112402021105124","webhook_secret":"whs_abcd",` +
		`"project":{"id":"1230954036934033243","type":"bot","platform":"discord","platform_id":"1026525568344264724"},` +
		`"user":{"id":"3949456393249234923","platform_id":"3949456393249234923","name":"username","avatar_url":"<avatar url>"}}}`
	t.Run("answered", func(t *testing.T) {
		t.Parallel()
		rec := &recorder{}
		cfg, _ := config(rec)
		var got webhook.IntegrationCreate
		cfg.OnIntegrationCreate = func(_ context.Context, e webhook.IntegrationCreate) (webhook.IntegrationAnswer, error) {
			got = e
			return webhook.IntegrationAnswer{WebhookURL: "https://bot.example/topgg", Routes: []string{"vote.create"}}, nil
		}
		h := newReceiver(t, cfg)
		w := serve(h, signed(t, secretA, now, body))
		require.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
		assert.JSONEq(t, `{"webhook_url":"https://bot.example/topgg","routes":["vote.create"]}`, w.Body.String())
		assert.Equal(t, "112402021105124", got.ConnectionID)
		assert.Equal(t, webhook.Secret("whs_abcd"), got.WebhookSecret)
		require.Len(t, rec.Events(), 1)
		assert.Equal(t, got, *rec.Events()[0].IntegrationCreate)
		assert.Empty(t, rec.Votes())
	})
	t.Run("no callback", func(t *testing.T) {
		t.Parallel()
		rec := &recorder{}
		cfg, _ := config(rec)
		h := newReceiver(t, cfg)
		w := serve(h, signed(t, secretA, now, body))
		assert.Equal(t, http.StatusNoContent, w.Code)
		assert.Len(t, rec.Events(), 1)
	})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		rec := &recorder{}
		cfg, _ := config(rec)
		cfg.OnIntegrationCreate = func(context.Context, webhook.IntegrationCreate) (webhook.IntegrationAnswer, error) {
			return webhook.IntegrationAnswer{}, nil // no URL: a bug, not an answer
		}
		h := newReceiver(t, cfg)
		assert.Equal(t, http.StatusInternalServerError, serve(h, signed(t, secretA, now, body)).Code)
		assert.Empty(t, rec.Events())
	})
}

func TestOtherEventsReachOnEventOnly(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"webhook.test":       `{"type":"webhook.test","data":{"user":{"id":"1","platform_id":"2","name":"a","avatar_url":"u"},"project":{"id":"3","type":"bot","platform":"discord","platform_id":"4"}}}`,
		"integration.delete": `{"type":"integration.delete","data":{"connection_id":"112402021105124"}}`,
		"review.create":      `{"type":"review.create","data":{"user":"not an object","stars":5}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			cfg, _ := config(rec)
			h := newReceiver(t, cfg)
			w := serve(h, signed(t, secretA, now, body))
			require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
			assert.Empty(t, rec.Votes())
			require.Len(t, rec.Events(), 1)
			assert.Equal(t, name, rec.Events()[0].Type)
		})
	}
}

func TestVotesWithoutOnVoteAreAnsweredAndReachOnEvent(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	cfg.OnVote = nil
	h := newReceiver(t, cfg)
	require.Equal(t, http.StatusNoContent, serve(h, signed(t, secretA, now, voteBody)).Code)
	require.Len(t, rec.Events(), 1)
	assert.Equal(t, wantVote(), *rec.Events()[0].Vote)
}

func TestNewRefusesUselessConfigs(t *testing.T) {
	t.Parallel()
	onVote := func(context.Context, webhook.Vote) error { return nil }
	for _, tc := range []struct {
		name string
		cfg  webhook.Config
		want string // the field named
	}{
		{"no secret", webhook.Config{OnVote: onVote}, "Config.Secrets"},
		{"empty v1 secret", webhook.Config{Secrets: []webhook.Secret{secretA, ""}, OnVote: onVote}, "Config.Secrets[1]"},
		{"v1 secret with newline", webhook.Config{Secrets: []webhook.Secret{secretA + "\n"}, OnVote: onVote}, "Config.Secrets[0]"},
		{"v0 secret with space", webhook.Config{LegacyAuth: " " + legacy, OnVote: onVote}, "Config.LegacyAuth"},
		{"v1 secret without whs_", webhook.Config{Secrets: []webhook.Secret{secretA, "4f1c2e9a7b3d"}, OnVote: onVote}, "Config.Secrets[1]"},
		{"v1 secret that is only whs_", webhook.Config{Secrets: []webhook.Secret{"whs_"}, OnVote: onVote}, "Config.Secrets[0]"},
		{"v0 secret given as v1", webhook.Config{Secrets: []webhook.Secret{legacy}, OnVote: onVote}, "Config.Secrets[0]"},
		{"no callback", webhook.Config{Secrets: []webhook.Secret{secretA}}, "Config.OnVote"},
	} {
		h, err := webhook.New(tc.cfg)
		assert.Nil(t, h, tc.name)
		requireConfigError(t, err, "webhook."+tc.want)
		assert.NotContains(t, err.Error(), "4f1c2e9a7b3d", "%s: the error quotes the secret", tc.name)
	}
	for _, cfg := range []webhook.Config{
		{Secrets: []webhook.Secret{secretA}, OnVote: onVote},
		{LegacyAuth: legacy, OnEvent: func(context.Context, webhook.Event) {}},
	} {
		_, err := webhook.New(cfg)
		assert.NoError(t, err)
	}
}

func TestAnswersCarryNoCallbackDetail(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	h := newReceiver(t, cfg)
	w := serve(h, signed(t, "whs_not_ours", now, voteBody))
	var probe map[string]any
	assert.Error(t, json.Unmarshal(w.Body.Bytes(), &probe), "refusals are short text, not JSON")
	assert.Contains(t, w.Body.String(), "signature does not match")
}

func TestSplitSecrets(t *testing.T) {
	t.Parallel()
	got, err := webhook.SplitSecrets(" whs_a , whs_b\n")
	require.NoError(t, err)
	assert.Equal(t, []webhook.Secret{"whs_a", "whs_b"}, got)
	for _, list := range []string{"", "whs_a,", ",whs_a", "whs_a,,whs_b", "whs a", "whs_a,b", "whs_a,WHS_b", "whs_a,whs_"} {
		_, err := webhook.SplitSecrets(list)
		requireConfigError(t, err, "secret ")
		assert.NotContains(t, err.Error(), "whs_a")
	}
}

// An empty key is a key anyone has: Verify given an empty secret (an unset
// variable) must refuse, never accept a body signed with "".
func TestVerifyRefusesEmptyOrMissingSecrets(t *testing.T) {
	t.Parallel()
	body := []byte(voteBody)
	forged := webhook.Sign("", now, body)
	for name, secrets := range map[string][]webhook.Secret{
		"only empty":        {""},
		"empty beside good": {secretA, ""},
		"trailing newline":  {secretA + "\n"},
		"without whs_":      {secretA, "4f1c2e9a"},
		"none":              nil,
	} {
		var ce *topgg.ConfigError
		assert.ErrorAs(t, webhook.Verify(forged, body, now, secrets...), &ce, name)
	}
	assert.NoError(t, webhook.Verify(webhook.Sign(secretA, now, body), body, now, secretA))
}

// TestNewRequestRefusesEmptySecret: NewRequest will not sign with a key
// anyone has (an unset variable), nor with one a Receiver would refuse for
// its white space, and its error does not quote the secret.
func TestNewRequestRefusesEmptySecret(t *testing.T) {
	t.Parallel()
	for _, secret := range []webhook.Secret{"", "whs_SEKRIT\n", "whs_SEK RIT"} {
		req, err := webhook.NewRequest(t.Context(), "http://127.0.0.1/hook", secret, now, []byte(voteBody))
		requireConfigError(t, err, "NewRequest")
		assert.Nil(t, req)
		assert.NotContains(t, err.Error(), "SEK")
	}
	req, err := webhook.NewRequest(t.Context(), "http://127.0.0.1/hook", secretA, now, []byte(voteBody))
	assert.NoError(t, err)
	assert.NotNil(t, req)
}

// requireConfigError requires a *topgg.ConfigError whose Field has field.
func requireConfigError(t *testing.T, err error, field string) {
	t.Helper()
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.Field, field)
}

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
