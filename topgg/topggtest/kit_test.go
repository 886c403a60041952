package topggtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// TestInjectMisuse: a fault that does nothing, a body with no answer to
// carry it, a negative count or wait, a bad status or a relative path is an
// error, and nothing is queued.
func TestInjectMisuse(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	for _, f := range []topggtest.Fault{
		{},
		{Path: "/v1/*"},
		{Delay: time.Second, Body: "{}"},
		{Status: 429, Times: -1},
		{Delay: -time.Second},
		{Status: 1000},
		{Path: "v1/projects/@me", Status: 500},
		{Method: "GET /v1", Status: 500},
	} {
		require.Error(t, srv.Inject(f), "%+v", f)
	}
	assert.Zero(t, srv.PendingFaults())
}

// TestNewClient: the client made by NewClient talks to the fake with its
// token; options given to it come after the server's.
func TestNewClient(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	client, err := srv.NewClient(topgg.WithUserAgent("kit-test/1"))
	require.NoError(t, err)
	p, err := client.Project(t.Context())
	require.NoError(t, err)
	assert.Equal(t, srv.Project().ID, p.ID)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "Bearer "+srv.Token(), reqs[0].Header.Get("Authorization"))
	assert.Contains(t, reqs[0].Header.Get("User-Agent"), "kit-test/1")
}

// TestHeldAndEndless: Held counts a request under a Delay until its client
// gives up; an Endless body goes on until the client stops reading.
func TestHeldAndEndless(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Delay: time.Hour}))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := getCtx(ctx, srv, "/v1/projects/@me"); done <- err }()
	require.Eventually(t, func() bool { return srv.Held() == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Eventually(t, func() bool { return srv.Held() == 0 }, 5*time.Second, time.Millisecond)

	require.NoError(t, srv.Inject(topggtest.Fault{Path: "/v1/projects/@me", Body: `{"name":"`, Endless: true}))
	res, err := getCtx(t.Context(), srv, "/v1/projects/@me")
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	n, err := io.Copy(io.Discard, io.LimitReader(res.Body, 10<<20))
	require.NoError(t, err)
	assert.Equal(t, int64(10<<20), n, "the endless body ended")
}

// TestNewServerRefusesBadOptions: an invalid option is an error from
// NewServer, never a panic.
func TestNewServerRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, opt := range []topggtest.Option{
		topggtest.WithPageSize(0), topggtest.WithNow(nil),
		topggtest.WithWebhook("not a url", "whs_x"), topggtest.WithWebhook("http://127.0.0.1:1/", ""),
		topggtest.WithLegacyWebhook("http://127.0.0.1:1/", ""), topggtest.WithWebhookRetries(time.Second, -1),
	} {
		srv, err := topggtest.NewServer(opt)
		require.Error(t, err)
		require.Nil(t, srv)
	}
}

func getCtx(ctx context.Context, srv *topggtest.Server, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+srv.Token())
	return srv.Client().Do(req)
}

// control calls the control API of s (its root is URL without "/api" plus
// "/control") and returns the status and body.
func control(t *testing.T, s *topggtest.Server, method, path, body string) (int, string) {
	return testkit.Do(t, method, strings.TrimSuffix(s.URL, "/api")+"/control"+path, body)
}

func TestControlInfo(t *testing.T) {
	t.Parallel()
	s := newServer(t, topggtest.WithControlAPI())
	status, body := control(t, s, http.MethodGet, "", "")
	require.Equal(t, http.StatusOK, status, body)
	var info struct {
		URL, Token string
		Project    map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(body), &info))
	assert.Equal(t, s.URL, info.URL)
	assert.Equal(t, s.Token(), info.Token)
	assert.Equal(t, s.Project().ID, info.Project["id"])
	assert.Equal(t, s.Project().PlatformID, info.Project["platform_id"])
	assert.Equal(t, "bot", info.Project["type"])
	assert.Empty(t, s.Requests(), "control calls are not service requests")
}

// TestControlVotesAndWebhooks: a receiver added over the control API gets
// the votes added over it (an array or one vote), signed; the history has
// them; a body the API does not know is refused with what is wrong.
func TestControlVotesAndWebhooks(t *testing.T) {
	t.Parallel()
	rcv := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{hookSecret}})
	s := newServer(t, topggtest.WithControlAPI())
	status, body := control(t, s, http.MethodPost, "/webhooks", fmt.Sprintf(`{"url":%q,"secret":%q}`, rcv.URL, hookSecret))
	require.Equal(t, http.StatusNoContent, status, body)

	created := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	status, body = control(t, s, http.MethodPost, "/votes", fmt.Sprintf(
		`[{"user_id":"900000000000000001","platform_id":"160105994217586689","weight":2,"created_at":%q,"query":"ref=abc"}]`,
		created.Format(time.RFC3339)))
	require.Equal(t, http.StatusNoContent, status, body)
	status, body = control(t, s, http.MethodPost, "/votes", `{"platform_id":"205680187394752512"}`)
	require.Equal(t, http.StatusNoContent, status, body)

	done(t, s, 2)
	votes := map[string]webhook.Vote{} // delivered concurrently: in any order
	for _, v := range rcv.Votes() {
		votes[v.PlatformID] = v
	}
	require.Len(t, votes, 2)
	first := votes["160105994217586689"]
	assert.Equal(t, 2, first.Weight)
	assert.Equal(t, map[string]string{"ref": "abc"}, first.Query)
	assert.True(t, created.Equal(first.CreatedAt))
	assert.Contains(t, votes, "205680187394752512")

	c, err := s.NewClient()
	require.NoError(t, err)
	page, err := c.Votes(t.Context(), topgg.VotesQuery{StartDate: created})
	require.NoError(t, err)
	require.Len(t, page.Votes, 2)

	for body, want := range map[string]string{
		`[{"user":"1"}]`:                   "unknown field",
		`{"created_at":"yesterday"}`:       "cannot parse",
		`[`:                                "unexpected EOF",
		`{"platform_id":"1","weight":"2"}`: "cannot unmarshal",
	} {
		status, got := control(t, s, http.MethodPost, "/votes", body)
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Contains(t, got, want, body)
	}
	for _, body := range []string{`{"url":"ftp://x","secret":"` + hookSecret + `"}`, `{"url":"http://127.0.0.1:1"}`, `{"url":"http://127.0.0.1:1","secret":"nope"}`, `{"url":"http://127.0.0.1:1","auth":"x"}`} {
		status, got := control(t, s, http.MethodPost, "/webhooks", body)
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Contains(t, got, `"error"`)
	}
	require.Len(t, s.Votes(), 2, "refused bodies add nothing")
}

// TestControlLegacyWebhookTestAndDeliveries: a v0 receiver added over the
// control API gets the webhook test; /control/deliveries shows the
// deliveries and their attempts, a refused one too.
func TestControlLegacyWebhookTestAndDeliveries(t *testing.T) {
	t.Parallel()
	rcv := testkit.NewReceiver(t, webhook.Config{LegacyAuth: "v0-auth"})
	s := newServer(t, topggtest.WithControlAPI())
	for _, auth := range []string{"v0-auth", "wrong"} {
		status, body := control(t, s, http.MethodPost, "/webhooks", fmt.Sprintf(`{"url":%q,"authorization":%q}`, rcv.URL, auth))
		require.Equal(t, http.StatusNoContent, status, body)
	}
	status, body := control(t, s, http.MethodPost, "/webhooks/test", "")
	require.Equal(t, http.StatusNoContent, status, body)
	done(t, s, 2)
	require.Len(t, rcv.Votes(), 1)
	assert.True(t, rcv.Votes()[0].Test, "a v0 test")

	status, body = control(t, s, http.MethodGet, "/deliveries", "")
	require.Equal(t, http.StatusOK, status)
	var ds []struct {
		URL, Type, Body string
		Version         int
		Done, Delivered bool
		Attempts        []struct {
			Status int
			Error  string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &ds), body)
	require.Len(t, ds, 2)
	for i, d := range ds {
		assert.Equal(t, rcv.URL, d.URL)
		assert.Equal(t, 0, d.Version)
		assert.Equal(t, "webhook.test", d.Type)
		assert.Contains(t, d.Body, `"type":"test"`)
		assert.True(t, d.Done)
		assert.Equal(t, i == 0, d.Delivered)
		require.Len(t, d.Attempts, 1, "a 4xx is not retried")
	}
	assert.Equal(t, http.StatusNoContent, ds[0].Attempts[0].Status)
	assert.Equal(t, http.StatusForbidden, ds[1].Attempts[0].Status)
}

// TestControlFaultsAndRequests: a fault injected over the control API is
// played (durations in seconds); /control/requests shows the requests as
// sent, with the body as text.
func TestControlFaultsAndRequests(t *testing.T) {
	t.Parallel()
	s := newServer(t, topggtest.WithControlAPI())
	status, body := control(t, s, http.MethodPost, "/faults", `{"method":"GET","path":"/v1/projects/@me","status":503,"times":2,"retry_after":1.5,"header":{"X-Fault":"yes"}}`)
	require.Equal(t, http.StatusNoContent, status, body)
	require.Equal(t, 2, s.PendingFaults())

	res, err := http.Get(s.URL + "/v1/projects/@me")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.Equal(t, "2", res.Header.Get("Retry-After"))
	assert.Equal(t, "yes", res.Header.Get("X-Fault"))

	for _, bad := range []string{`{"path":"/x"}`, `{"status":99}`, `{"path":"x","status":500}`, `{"status":500,"delay":-1}`, `{"stat":500}`} {
		status, body := control(t, s, http.MethodPost, "/faults", bad)
		require.Equal(t, http.StatusBadRequest, status, bad)
		require.Contains(t, body, `"error"`)
	}
	require.Equal(t, 1, s.PendingFaults())

	req, err := http.NewRequest(http.MethodPost, s.URL+"//bots/stats", strings.NewReader(`{"server_count":3}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", s.Token())
	req.Header.Set("Content-Type", "application/json")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)

	status, body = control(t, s, http.MethodGet, "/requests", "")
	require.Equal(t, http.StatusOK, status)
	var reqs []struct {
		Method, Path, Body string
		Header             http.Header
	}
	require.NoError(t, json.Unmarshal([]byte(body), &reqs), body)
	require.Len(t, reqs, 2)
	assert.Equal(t, "/v1/projects/@me", reqs[0].Path)
	assert.Equal(t, http.MethodPost, reqs[1].Method)
	assert.Equal(t, "//bots/stats", reqs[1].Path)
	assert.Equal(t, `{"server_count":3}`, reqs[1].Body)
	assert.Equal(t, s.Token(), reqs[1].Header.Get("Authorization"))

	status, _ = control(t, s, http.MethodDelete, "/faults", "")
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	status, _ = control(t, s, http.MethodGet, "/nope", "")
	assert.Equal(t, http.StatusNotFound, status)
}

func TestControlAPIOffByDefault(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	status, body := control(t, s, http.MethodGet, "", "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"error":"Not found"}`, body)
	require.Len(t, s.Requests(), 1, "a request like any other")
}

// TestVotesBeforeAReceiverSendNoWebhook: votes added before a receiver are
// history (as topggfake's -votes): served, not delivered.
func TestVotesBeforeAReceiverSendNoWebhook(t *testing.T) {
	t.Parallel()
	rcv := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{hookSecret}})
	created := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	s := newServer(t)
	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2", CreatedAt: created}, topggtest.Vote{UserID: "3", PlatformID: "4"})
	require.NoError(t, s.AddWebhook(rcv.URL, string(hookSecret)))
	votes := s.Votes()
	require.Len(t, votes, 2)
	assert.Equal(t, 1, votes[0].Weight)
	assert.True(t, votes[0].ExpiresAt.Equal(created.Add(12*time.Hour)))
	assert.False(t, votes[1].CreatedAt.IsZero())

	s.AddVote(topggtest.Vote{UserID: "5", PlatformID: "6"})
	ds := done(t, s, 1)
	assert.Contains(t, string(ds[0].Body), `"platform_id":"6"`)
	assert.Len(t, rcv.Votes(), 1)
}

func TestWithAddr(t *testing.T) {
	t.Parallel()
	port, err := httpx.FreePort()
	require.NoError(t, err)
	s, err := topggtest.NewServer(topggtest.WithAddr(fmt.Sprintf("127.0.0.1:%d", port)))
	if err != nil {
		t.Skipf("port %d was taken meanwhile: %v", port, err)
	}
	t.Cleanup(s.Close)
	assert.Equal(t, fmt.Sprintf("http://127.0.0.1:%d/api", port), s.URL)

	_, err = topggtest.NewServer(topggtest.WithAddr(fmt.Sprintf("127.0.0.1:%d", port)))
	require.Error(t, err, "the port is in use")
	_, err = topggtest.NewServer(topggtest.WithAddr("not an address"))
	require.Error(t, err)
}

func TestAddLegacyWebhookRefusals(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	require.Error(t, s.AddLegacyWebhook("http://127.0.0.1:1/hook", ""))
	require.Error(t, s.AddLegacyWebhook("/hook", "auth"))
	s.SendWebhookTest()
	require.Empty(t, s.Deliveries())
}
