package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// printed returns every fmt rendering of v.
func printed(v any) string {
	var b strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%T"} {
		fmt.Fprintf(&b, verb+"\n", v)
	}
	return b.String()
}

func assertNoSecret(t *testing.T, out string, secrets ...webhook.Secret) {
	t.Helper()
	for _, s := range secrets {
		assert.NotContains(t, out, string(s))
		assert.NotContains(t, out, fmt.Sprintf("%x", []byte(s)), "hex of the secret")
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg, _ := config(rec)
	cfg.LegacyAuth = legacy
	h := newReceiver(t, cfg)
	ic := webhook.IntegrationCreate{ConnectionID: "1", WebhookSecret: "whs_integration_secret"}
	ev := webhook.Event{Type: "integration.create", IntegrationCreate: &ic}
	all := []webhook.Secret{secretA, secretB, legacy, ic.WebhookSecret}

	for _, v := range []any{cfg, &cfg, h, *h, ic, &ic, ev, &ev, secretA, []webhook.Secret{secretA},
		struct{ C webhook.Config }{cfg}, map[string]any{"cfg": cfg, "ic": ic}} {
		assertNoSecret(t, printed(v), all...)
	}
	assert.Contains(t, printed(cfg), "[redacted]")

	j, err := json.Marshal(ic)
	require.NoError(t, err)
	assertNoSecret(t, string(j), all...)

	var logs testlog.Buffer
	var jsonLogs bytes.Buffer
	for _, l := range []*slog.Logger{logs.Logger(), slog.New(slog.NewJSONHandler(&jsonLogs, nil))} {
		l.Info("values", "cfg", cfg, "ic", ic, "ev", ev, "secret", secretA, "handler", h)
	}
	assertNoSecret(t, logs.String()+jsonLogs.String(), all...)
	// The real value is one conversion away.
	assert.Equal(t, "whs_integration_secret", string(ic.WebhookSecret))
}

func TestSecretsNeverLoggedOrInErrors(t *testing.T) {
	t.Parallel()
	var logs testlog.Buffer
	rec := &recorder{voteErr: errors.New("store down")}
	cfg, _ := config(rec)
	cfg.LegacyAuth = legacy
	cfg.Logger = logs.Logger()
	cfg.OnIntegrationCreate = func(context.Context, webhook.IntegrationCreate) (webhook.IntegrationAnswer, error) {
		return webhook.IntegrationAnswer{}, errors.New("no")
	}
	h := newReceiver(t, cfg)

	var answers strings.Builder
	integration := `{"type":"integration.create","data":{"connection_id":"1","webhook_secret":"whs_integration_secret"}}`
	for _, req := range []*http.Request{
		signed(t, secretA, now, voteBody),         // 500: store down
		signed(t, secretA, now, integration),      // 500: callback failed
		signed(t, secretA, now, integration[:40]), // 400
		signed(t, "whs_wrong", now, voteBody),     // 403
		withHeader("t=1,v1="+string(secretA), ""), // 401, a secret in the header
	} {
		w := serve(h, req)
		answers.WriteString(w.Body.String())
	}
	for _, auth := range []string{string(legacy) + "x", string(legacy)[1:]} { // 403, near misses
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{}`))
		req.Header.Set("Authorization", auth)
		answers.WriteString(serve(h, req).Body.String())
	}
	out := logs.String() + answers.String()
	require.Contains(t, logs.String(), "store down", "the log says why")
	assertNoSecret(t, out, secretA, secretB, legacy, "whs_integration_secret", legacy[1:])

	for _, cfg := range []webhook.Config{
		{Secrets: []webhook.Secret{secretA + " "}, OnVote: rec.onVote},
		{LegacyAuth: legacy + "\n", OnVote: rec.onVote},
	} {
		_, err := webhook.New(cfg)
		require.Error(t, err)
		assertNoSecret(t, err.Error(), secretA, legacy)
	}
}
