package topggtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

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
		Status             int
	}
	require.NoError(t, json.Unmarshal([]byte(body), &reqs), body)
	require.Len(t, reqs, 2)
	assert.Equal(t, "/v1/projects/@me", reqs[0].Path)
	assert.Equal(t, http.StatusServiceUnavailable, reqs[0].Status, "the status answered")
	assert.Equal(t, http.StatusOK, reqs[1].Status)
	assert.Equal(t, http.MethodPost, reqs[1].Method)
	assert.Equal(t, "//bots/stats", reqs[1].Path)
	assert.Equal(t, `{"server_count":3}`, reqs[1].Body)
	assert.Equal(t, s.Token(), reqs[1].Header.Get("Authorization"))

	status, _ = control(t, s, http.MethodDelete, "/faults", "")
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	status, _ = control(t, s, http.MethodGet, "/nope", "")
	assert.Equal(t, http.StatusNotFound, status)
}

// TestControlBotsAndCursors: a test in another language lists other bots in
// the v0 directory and expires the vote history's cursors, as AddBot and
// ExpireCursors do in Go.
func TestControlBotsAndCursors(t *testing.T) {
	t.Parallel()
	s := newServer(t, topggtest.WithControlAPI())
	status, body := control(t, s, http.MethodPost, "/bots", `{"id":"264811613708746752","username":"Luca","avatar":null,"monthlyPoints":9}`)
	require.Equal(t, http.StatusNoContent, status, body)
	c, err := s.NewClient()
	require.NoError(t, err)
	b, err := c.Legacy().Bot(t.Context(), "264811613708746752")
	require.NoError(t, err)
	require.Equal(t, "Luca", b.Username)
	require.Equal(t, 9, b.MonthlyPoints)
	for _, bad := range []string{`{"username":"no id"}`, `{"id":"1","nick":"x"}`, `[]`} {
		status, body := control(t, s, http.MethodPost, "/bots", bad)
		require.Equal(t, http.StatusBadRequest, status, bad)
		require.Contains(t, body, `"error"`)
	}

	s.AddVote(topggtest.Vote{})
	page, err := c.Votes(t.Context(), topgg.VotesQuery{StartDate: time.Now().Add(-time.Hour)})
	require.NoError(t, err)
	status, body = control(t, s, http.MethodPost, "/cursors/expire", "")
	require.Equal(t, http.StatusNoContent, status, body)
	_, err = c.Votes(t.Context(), topgg.VotesQuery{Cursor: page.Cursor})
	var apiErr *topgg.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusBadRequest, apiErr.StatusCode, "an expired cursor")
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
	if errors.Is(err, syscall.EADDRINUSE) {
		t.Skipf("port %d was taken meanwhile: %v", port, err)
	}
	require.NoError(t, err)
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

const hookSecret = "whs_topggtest_receiver_secret"

func newServer(t *testing.T, opts ...topggtest.Option) *topggtest.Server {
	t.Helper()
	s, err := topggtest.NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// done waits until the server has n deliveries, all finished.
func done(t *testing.T, s *topggtest.Server, n int) []topggtest.Delivery {
	t.Helper()
	var ds []topggtest.Delivery
	require.Eventually(t, func() bool {
		ds = s.Deliveries()
		if len(ds) != n {
			return false
		}
		for _, d := range ds {
			if !d.Done {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond)
	return ds
}

func TestWebhookVoteIsSignedAndVerifiedByTheReceiver(t *testing.T) {
	t.Parallel()
	rcv := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{hookSecret}})
	s := newServer(t, topggtest.WithWebhook(rcv.URL, hookSecret))

	created := time.Now().Add(-time.Minute).UTC().Truncate(100 * time.Nanosecond)
	s.AddVoteQuery("ref=abc", topggtest.Vote{UserID: "900000000000000001", PlatformID: "160105994217586689", Weight: 2,
		CreatedAt: created})

	ds := done(t, s, 1)
	require.Len(t, ds[0].Attempts, 1)
	a := ds[0].Attempts[0]
	assert.Equal(t, http.StatusNoContent, a.Status)
	assert.NoError(t, a.Err)
	assert.True(t, ds[0].Delivered())
	assert.Equal(t, 1, ds[0].Version)
	assert.Equal(t, "vote.create", ds[0].Type)
	assert.Regexp(t, `^t=\d+,v1=[0-9a-f]{64}$`, a.Header.Get("X-Topgg-Signature"))
	assert.NotEmpty(t, a.Header.Get("X-Topgg-Trace"))
	// The real shapes: 7 fractional digits and +00:00.
	assert.Regexp(t, regexp.MustCompile(`"created_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}\+00:00"`), string(ds[0].Body))

	project := topggtest.DiscordBot()
	assert.Equal(t, []webhook.Vote{{
		Vote: topgg.Vote{
			UserID:     "900000000000000001",
			PlatformID: "160105994217586689",
			Weight:     2,
			CreatedAt:  created,
			ExpiresAt:  created.Add(12 * time.Hour),
		},
		Version:           1,
		ID:                topggtest.WebhookVoteID(1),
		UserName:          "voter160105994217586689",
		AvatarURL:         "https://cdn.discordapp.com/embed/avatars/0.png",
		ProjectID:         project.ID,
		ProjectPlatformID: project.PlatformID,
		Query:             map[string]string{"ref": "abc"},
	}}, rcv.Votes())
}

func TestWebhookRetriesOn5xxAndTimeoutsOnSchedule(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	delays := []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond}
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch n {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 3:
			// No answer: the sender times out and hangs up, which the server
			// sees once the body is read.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	s := newServer(t, topggtest.WithWebhook(srv.URL, hookSecret), topggtest.WithWebhookRetries(timeout, delays...))

	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
	d := done(t, s, 1)[0]
	require.Len(t, d.Attempts, 4)
	assert.Equal(t, []int{500, 503, 0, 204}, statuses(d))
	assert.ErrorIs(t, d.Attempts[2].Err, context.DeadlineExceeded)
	assert.True(t, d.Delivered())
	for i := 1; i < 4; i++ {
		gap := d.Attempts[i].At.Sub(d.Attempts[i-1].At)
		want := delays[i-1]
		if i == 3 {
			want += timeout // the timed-out attempt waited for its answer first
		}
		assert.GreaterOrEqual(t, gap, want, "retry %d came early", i)
	}
}

func statuses(d topggtest.Delivery) []int {
	out := make([]int, len(d.Attempts))
	for i, a := range d.Attempts {
		out[i] = a.Status
	}
	return out
}

func TestWebhookGivesUpAfterTheLastRetry(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	s := newServer(t, topggtest.WithWebhook(srv.URL, hookSecret),
		topggtest.WithWebhookRetries(time.Second, time.Millisecond, time.Millisecond, time.Millisecond))
	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
	d := done(t, s, 1)[0]
	assert.Equal(t, []int{502, 502, 502, 502}, statuses(d), "one attempt and 3 retries")
	assert.False(t, d.Delivered())
}

func TestWebhookNeverRetries4xx(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 401, 403, 404, 405, 413, 429} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
		}))
		t.Cleanup(srv.Close)
		s := newServer(t, topggtest.WithWebhook(srv.URL, hookSecret),
			topggtest.WithWebhookRetries(time.Second, time.Millisecond, time.Millisecond, time.Millisecond))
		s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
		d := done(t, s, 1)[0]
		assert.Equal(t, []int{status}, statuses(d))
	}
}

func TestWebhookRecordsTheAnswers(t *testing.T) {
	t.Parallel()
	rcv := testkit.NewReceiver(t, webhook.Config{
		Secrets: []webhook.Secret{"whs_other", hookSecret},
		OnIntegrationCreate: func(context.Context, webhook.IntegrationCreate) (webhook.IntegrationAnswer, error) {
			return webhook.IntegrationAnswer{WebhookURL: "https://bot.example/hook", Routes: []string{"vote.create"}}, nil
		},
	})
	s := newServer(t, topggtest.WithWebhook(rcv.URL, hookSecret), topggtest.WithWebhook(rcv.URL, "whs_unknown"))

	require.NoError(t, s.SendWebhookEvent("integration.create", map[string]any{
		"connection_id": "112402021105124", "webhook_secret": "whs_new",
		"project": map[string]string{"id": "1"}, "user": map[string]string{"id": "2"},
	}))
	ds := done(t, s, 2)
	byURLSecret := map[int]topggtest.Delivery{}
	for _, d := range ds {
		byURLSecret[d.Attempts[0].Status] = d
	}
	require.Contains(t, byURLSecret, http.StatusOK)
	require.Contains(t, byURLSecret, http.StatusForbidden, "the receiver does not know whs_unknown")
	assert.JSONEq(t, `{"webhook_url":"https://bot.example/hook","routes":["vote.create"]}`,
		string(byURLSecret[http.StatusOK].Attempts[0].Body))
	assert.Contains(t, string(byURLSecret[http.StatusForbidden].Attempts[0].Body), "signature")
	assert.Len(t, byURLSecret[http.StatusForbidden].Attempts, 1)
	require.Len(t, rcv.Events(), 1)
	assert.Equal(t, webhook.Secret("whs_new"), rcv.Events()[0].IntegrationCreate.WebhookSecret)

	assert.Error(t, s.SendWebhookEvent("x", json.RawMessage(`{`)), "unencodable data is an error, nothing sent")
	assert.Len(t, s.Deliveries(), 2)
}

func TestWebhookTestEvent(t *testing.T) {
	t.Parallel()
	rcv := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{hookSecret}})
	legacy := testkit.NewReceiver(t, webhook.Config{LegacyAuth: "v0-auth"})
	s := newServer(t, topggtest.WithWebhook(rcv.URL, hookSecret), topggtest.WithLegacyWebhook(legacy.URL, "v0-auth"))

	s.SendWebhookTest()
	done(t, s, 2)
	require.Len(t, rcv.Events(), 1)
	ev := rcv.Events()[0]
	assert.Equal(t, "webhook.test", ev.Type)
	assert.Equal(t, topggtest.DiscordBot().ID, ev.Test.Project.ID)
	assert.NotEmpty(t, ev.Test.User.PlatformID)
	assert.Empty(t, rcv.Votes(), "a v1 test is no vote")

	require.Len(t, legacy.Votes(), 1)
	assert.True(t, legacy.Votes()[0].Test)
	assert.Equal(t, 0, legacy.Votes()[0].Version)
}

func TestLegacyWebhookVote(t *testing.T) {
	t.Parallel()
	for _, project := range []topggtest.Project{topggtest.DiscordBot(), topggtest.DiscordServer()} {
		rcv := testkit.NewReceiver(t, webhook.Config{LegacyAuth: "v0-auth"})
		s := newServer(t, topggtest.WithProject(project), topggtest.WithLegacyWebhook(rcv.URL, "v0-auth"))
		s.AddVoteQuery("?ref=a+b&x=1", topggtest.Vote{UserID: "1", PlatformID: "160105994217586689", Weight: 2})
		d := done(t, s, 1)[0]
		assert.Equal(t, 0, d.Version)
		assert.Equal(t, "v0-auth", d.Attempts[0].Header.Get("Authorization"))
		assert.Empty(t, d.Attempts[0].Header.Get("X-Topgg-Signature"))
		assert.Equal(t, []webhook.Vote{{
			Vote:              topgg.Vote{PlatformID: "160105994217586689", Weight: 2},
			ProjectPlatformID: project.PlatformID,
			Guild:             project.Type == "server",
			Query:             map[string]string{"ref": "a b", "x": "1"},
		}}, rcv.Votes())
	}
}

func TestWebhookSignsWithRealTimeAndDatesVotesWithTheServerClock(t *testing.T) {
	t.Parallel()
	// A server clock far from the receiver's real one: the signature is
	// still fresh, the vote keeps the server's dates.
	past := time.Date(2026, 1, 17, 23, 36, 6, 347320000, time.UTC)
	rcv := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{hookSecret}})
	s := newServer(t, topggtest.WithWebhook(rcv.URL, hookSecret), topggtest.WithNow(func() time.Time { return past }))
	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
	d := done(t, s, 1)[0]
	assert.Equal(t, []int{http.StatusNoContent}, statuses(d))
	assert.Contains(t, string(d.Body), `"created_at":"2026-01-17T23:36:06.3473200+00:00"`)
	require.Len(t, rcv.Votes(), 1)
	assert.Equal(t, past, rcv.Votes()[0].CreatedAt)
}

func TestCloseEndsDeliveriesAndLeavesNoGoroutine(t *testing.T) {
	// Not parallel: goleak looks at the whole process.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			// The server sees the client hang up only once the body is read.
			_, _ = io.Copy(io.Discard, r.Body)
			hung <- struct{}{}
			<-r.Context().Done()
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	s, err := topggtest.NewServer(
		topggtest.WithWebhook(srv.URL+"/fail", hookSecret), // waits an hour to retry
		topggtest.WithWebhook(srv.URL+"/hang", hookSecret), // in flight at Close
		topggtest.WithWebhookRetries(time.Hour, time.Hour))
	require.NoError(t, err)
	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"})
	<-hung
	require.Eventually(t, func() bool {
		for _, d := range s.Deliveries() {
			if len(d.Attempts) == 1 && d.Attempts[0].Status == 500 {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)

	start := time.Now()
	s.Close()
	assert.Less(t, time.Since(start), 5*time.Second, "Close does not wait out retries")
	for _, d := range s.Deliveries() {
		assert.True(t, d.Done)
		assert.Len(t, d.Attempts, 1)
	}
	s.AddVote(topggtest.Vote{UserID: "1", PlatformID: "2"}) // after Close: no delivery
	s.SendWebhookTest()
	assert.Len(t, s.Deliveries(), 2)
}

// TestAddWebhookPointsARunningServerAtAReceiver: a receiver started after the
// fake gets the votes added from then on, signed like the others, and the
// events; a malformed URL or secret is an error and adds nothing.
func TestAddWebhookPointsARunningServerAtAReceiver(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.AddVote(topggtest.Vote{UserID: "900000000000000001", PlatformID: "160105994217586689"})
	rcv := testkit.NewReceiver(t, webhook.Config{Secrets: []webhook.Secret{hookSecret}})
	for _, bad := range []struct{ url, secret string }{
		{"127.0.0.1:1/hook", hookSecret}, {rcv.URL, ""}, {rcv.URL, "topggtest_receiver_secret"},
		{rcv.URL, hookSecret + ",whs_b"}, {rcv.URL, hookSecret + "\n"},
	} {
		assert.Error(t, s.AddWebhook(bad.url, bad.secret), "%q %q", bad.url, bad.secret)
	}
	require.NoError(t, s.AddWebhook(rcv.URL, hookSecret))

	s.AddVote(topggtest.Vote{UserID: "900000000000000002", PlatformID: "160105994217586690", Weight: 2})
	s.SendWebhookTest()
	ds := done(t, s, 2)
	for _, d := range ds {
		assert.Equal(t, rcv.URL, d.URL)
		assert.True(t, d.Delivered(), "%+v", d)
	}
	votes := rcv.Votes()
	require.Len(t, votes, 1, "only the vote added after AddWebhook is delivered")
	assert.Equal(t, "160105994217586690", votes[0].PlatformID)
	assert.Equal(t, 2, votes[0].Weight)
	assert.Len(t, rcv.Events(), 2)
}
