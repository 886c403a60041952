package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

const (
	e2eWebhookSecret = "whs_e2e_secret_3a9f61d2"
	e2eWebhookAuth   = "e2e-v0-auth-0c5e9b"
	// e2eRetry is the fake's wait before each retry of a failed delivery
	// (Top.gg waits about 1, 2 and 4 s): 3 retries, as on Top.gg.
	e2eRetry = 50 * time.Millisecond
)

// hookProxy stands where Top.gg's webhooks go: one URL for the fake Top.gg
// across the bot processes a test starts and kills, each listening on a free
// port it logs (the bot is another process: its log is what an operator
// sees; an in-process bot is found by plugin.Plugin.WebhookAddr and given to
// the fake with topggtest.Server.AddWebhook, as the demo does). The proxy
// forwards to the current bot once told where it is, and answers 503 while
// there is none. It can also answer 500 itself (the receiver failing) or
// hold deliveries until released.
type hookProxy struct {
	t      *testing.T
	srv    *httptest.Server
	target atomic.Pointer[string] // "http://127.0.0.1:port", nil: no bot
	fail   atomic.Bool            // answer 500 without forwarding
	// afterAnswer, when set, is called with each answer of the bot before it
	// is passed back to Top.gg.
	afterAnswer atomic.Pointer[func(status int)]

	mu      sync.Mutex
	holding chan struct{} // non-nil: deliveries wait until it is closed
}

func newHookProxy(t *testing.T) *hookProxy {
	hp := &hookProxy{t: t}
	client := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	hp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hp.mu.Lock()
		hold := hp.holding
		hp.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		target := hp.target.Load()
		switch {
		case hp.fail.Load():
			http.Error(w, "receiver failing", http.StatusInternalServerError)
			return
		case target == nil:
			http.Error(w, "no bot", http.StatusServiceUnavailable)
			return
		}
		body, err := io.ReadAll(r.Body)
		if !assert.NoError(t, err) {
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, *target+r.URL.Path, bytes.NewReader(body))
		if !assert.NoError(t, err) {
			return
		}
		req.Header = r.Header.Clone()
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, "bot unreachable", http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if f := hp.afterAnswer.Load(); f != nil {
			(*f)(resp.StatusCode)
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(hp.srv.Close)
	return hp
}

// url is the receiver URL the fake Top.gg delivers to.
func (hp *hookProxy) url() string { return hp.srv.URL + plugin.DefaultWebhookPath }

// hold makes deliveries wait; the returned func releases them.
func (hp *hookProxy) hold() (release func()) {
	ch := make(chan struct{})
	hp.mu.Lock()
	hp.holding = ch
	hp.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			hp.mu.Lock()
			hp.holding = nil
			hp.mu.Unlock()
			close(ch)
		})
	}
}

// follow points the proxy at the receiver of a running bot (from its log).
func (hp *hookProxy) follow(p *proc) {
	hp.t.Helper()
	addr := p.webhookAddr()
	target := "http://" + addr
	hp.target.Store(&target)
}

// webhookAddr waits for the bot's "webhook receiver listening" record and
// returns its address.
func (p *proc) webhookAddr() string {
	p.t.Helper()
	p.waitMsg("webhook receiver listening")
	for _, rec := range p.records() {
		if rec["msg"] == "webhook receiver listening" {
			addr, _ := rec["addr"].(string)
			require.NotEmpty(p.t, addr)
			return addr
		}
	}
	p.t.Fatal("no webhook receiver address in the log")
	return ""
}

// newWebhookE2E is newE2E with the bot's receiver on (on a free port, behind
// a hookProxy) and the fake Top.gg delivering v1 webhooks to it, or v0 ones
// when legacy; retries come after e2eRetry.
func newWebhookE2E(t *testing.T, legacy bool, tgOpts ...topggtest.Option) (*e2e, *hookProxy) {
	t.Helper()
	hp := newHookProxy(t)
	target := topggtest.WithWebhook(hp.url(), e2eWebhookSecret)
	if legacy {
		target = topggtest.WithLegacyWebhook(hp.url(), e2eWebhookAuth)
	}
	opts := append([]topggtest.Option{target, topggtest.WithWebhookRetries(5*time.Second, e2eRetry, e2eRetry, e2eRetry)}, tgOpts...)
	e := newE2E(t, opts...)
	e.env["TOPGG_WEBHOOK_ADDR"] = "127.0.0.1:0"
	if legacy {
		e.env["TOPGG_WEBHOOK_AUTH"] = e2eWebhookAuth
	} else {
		e.env["TOPGG_WEBHOOK_SECRET"] = e2eWebhookSecret
	}
	t.Cleanup(func() {
		for _, d := range e.tg.Deliveries() {
			for _, a := range d.Attempts {
				assert.NotContains(t, string(a.Body), e2eWebhookSecret, "the receiver's answer holds the secret")
			}
		}
	})
	return e, hp
}

// startHooked starts the bot, points the proxy at it, and waits until it is
// online and has polled the votes once.
func (e *e2e) startHooked(hp *hookProxy) *proc {
	e.t.Helper()
	polls := e.count(http.MethodGet, votesPath)
	p := e.startBot()
	hp.follow(p)
	p.waitMsg("bot is online")
	require.Eventually(e.t, func() bool { return e.count(http.MethodGet, votesPath) > polls }, wait, tick, "no first poll")
	e.t.Cleanup(func() {
		for _, s := range []string{e2eWebhookSecret, e2eWebhookAuth} {
			assert.NotContains(e.t, p.stderr.String()+p.stdout.String(), s, "a webhook secret is in the output")
		}
	})
	return p
}

// waitDeliveries waits until every delivery is done and returns them.
func (e *e2e) waitDeliveries(n int) []topggtest.Delivery {
	e.t.Helper()
	require.Eventually(e.t, func() bool {
		d := e.tg.Deliveries()
		if len(d) < n {
			return false
		}
		for _, x := range d {
			if !x.Done {
				return false
			}
		}
		return true
	}, wait, tick, "the deliveries did not finish")
	return e.tg.Deliveries()
}

// sourcesOf returns the "source" of the reward log records of user.
func (p *proc) sourcesOf(user string) []string {
	var out []string
	for _, rec := range p.records() {
		if rec["msg"] == "vote rewarded: role given" && rec["user"] == user {
			s, _ := rec["source"].(string)
			out = append(out, s)
		}
	}
	return out
}

// waitSources waits for a reward record of user (it is logged once the
// grant returned, after the fake Discord counted it) and returns the sources.
func (p *proc) waitSources(user string) []string {
	p.t.Helper()
	require.Eventually(p.t, func() bool { return len(p.sourcesOf(user)) > 0 }, wait, tick, "no reward logged for %s", user)
	return p.sourcesOf(user)
}

// freshVote is a vote created now by the n-th e2e voter, lasting life.
func freshVote(n int, life time.Duration) topggtest.Vote {
	now := time.Now().UTC()
	return topggtest.Vote{
		UserID: fmt.Sprintf("810%015d", n), PlatformID: fmt.Sprintf("310%015d", n),
		CreatedAt: now, ExpiresAt: now.Add(life),
	}
}

// voteCreateBody is a vote.create body as Top.gg sends it, for a vote that
// is not in the fake's history.
func voteCreateBody(v topggtest.Vote, projectPlatformID string) []byte {
	ts := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.0000000") + "+00:00" }
	return fmt.Appendf(nil, `{"type":"vote.create","data":{"id":"808499215864999001","weight":1,`+
		`"created_at":%q,"expires_at":%q,`+
		`"project":{"id":"803190510032756736","type":"bot","platform":"discord","platform_id":%q},`+
		`"user":{"id":%q,"platform_id":%q,"name":"voter","avatar_url":"https://cdn.discordapp.com/embed/avatars/0.png"}}}`,
		ts(v.CreatedAt), ts(v.ExpiresAt), projectPlatformID, v.UserID, v.PlatformID)
}

// postSignedVia sends a body signed with the e2e secret through the proxy
// (as Top.gg would) and returns the status.
func postSignedVia(e *e2e, hp *hookProxy, body []byte) int {
	e.t.Helper()
	req, err := webhook.NewRequest(e.ctx(), hp.url(), e2eWebhookSecret, time.Now(), body)
	require.NoError(e.t, err)
	req.Close = true // no idle connection outlives the test (goleak)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(e.t, resp.Body.Close())
	return resp.StatusCode
}
