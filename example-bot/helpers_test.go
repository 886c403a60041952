package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// Distinctive tokens for the end-to-end runs: no output may hold them.
const (
	e2eDiscordToken = "e2e-discord-token-7d3f0b2a"
	e2eTopggToken   = "e2e-topgg-token-c81e44f9"

	e2eShards  = 2
	rewardRole = "1300000000000000777"

	metricsPath  = "/v1/projects/@me/metrics"
	commandsPath = "/v1/projects/@me/commands"
	votesPath    = "/v1/projects/@me/votes"

	wait = 20 * time.Second // bounds every wait; never reached when the bot works
	tick = 10 * time.Millisecond
)

// guild returns the n-th guild id of a shard of the e2e bot.
func guild(n, shard int) string { return discordtest.GuildIDForShard(n, shard, e2eShards) }

// e2e is one end-to-end test's world: a fake Discord and a fake Top.gg in the
// test process, and the environment that points the bot's process at them.
type e2e struct {
	t     *testing.T
	dc    *discordtest.Server
	tg    *topggtest.Server
	state string
	env   map[string]string
}

// newE2E starts the fakes: 2 shards, 3 guilds (2 on shard 0, 1 on shard 1).
// It skips the test under -short.
func newE2E(t *testing.T, tgOpts ...topggtest.Option) *e2e {
	t.Helper()
	if testing.Short() || botBinary == "" {
		t.Skip("end-to-end test: runs the built bot (not with -short)")
	}
	t.Parallel()
	dc, err := discordtest.NewServer(discordtest.WithToken(e2eDiscordToken), discordtest.WithShardCount(e2eShards),
		discordtest.WithGuilds(guild(0, 0), guild(1, 0), guild(0, 1)))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	project := topggtest.DiscordBot()
	project.PlatformID = dc.BotUserID()
	tg, err := topggtest.NewServer(append([]topggtest.Option{topggtest.WithToken(e2eTopggToken), topggtest.WithProject(project)}, tgOpts...)...)
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	state := t.TempDir()
	return &e2e{t: t, dc: dc, tg: tg, state: state, env: map[string]string{
		"DISCORD_TOKEN":            e2eDiscordToken,
		"TOPGG_TOKEN":              e2eTopggToken,
		"TOPGG_API_URL":            tg.URL,
		"DISCORD_API_URL":          dc.APIBase(),
		"TOPGG_AUTOPOST_INTERVAL":  "200ms",
		"TOPGG_VOTE_POLL_INTERVAL": "100ms",
		"SHARD_COUNT":              fmt.Sprint(e2eShards),
		"REWARD_GUILD_ID":          guild(0, 0),
		"REWARD_ROLE_ID":           rewardRole,
		"TOPGG_STATE_DIR":          state,
		"LOG_FORMAT":               "json",
		"LOG_LEVEL":                "debug", // the most output, for the token checks
	}}
}

// ctx bounds a whole scenario's calls to the fakes: several steps of up to
// wait each, under 60 s in all.
func (e *e2e) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// slowRoles puts a proxy between the bot and the fake Discord's REST API that
// holds every role change for delay (or until the bot drops the request), and
// points DISCORD_API_URL at it. The gateway is not proxied: its URL comes from
// the fake's own GET /gateway. It returns the number of role changes that have
// reached the proxy so far.
func (e *e2e) slowRoles(delay time.Duration) (arrived func() int) {
	target, err := url.Parse(e.dc.URL)
	require.NoError(e.t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	var n atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/roles/") {
			n.Add(1)
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	e.t.Cleanup(proxy.Close)
	e.env["DISCORD_API_URL"] = proxy.URL + "/api/v9/"
	return func() int { return int(n.Load()) }
}

// proc is one run of the bot's process.
type proc struct {
	t              *testing.T
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{} // closed when the process has exited
	err            error         // Wait's result, set before done is closed
}

// start runs the bot with env (and nothing of the test's environment) and
// args. At cleanup it is killed if still running, and its output is checked
// for the tokens.
func (e *e2e) start(env map[string]string, args ...string) *proc {
	e.t.Helper()
	cmd := exec.Command(botBinary, args...)
	cmd.Env = []string{}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	p := &proc{t: e.t, cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	require.NoError(e.t, cmd.Start())
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	e.t.Cleanup(func() {
		if !p.exited() {
			_ = cmd.Process.Kill()
			p.waitKilled()
		}
		p.checkNoToken()
		if e.t.Failed() {
			e.t.Logf("bot stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// startBot runs the bot with e.env.
func (e *e2e) startBot() *proc { e.t.Helper(); return e.start(e.env) }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitCode waits up to d for the process to exit and returns its status.
func (p *proc) exitCode(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.t.Fatalf("the bot did not exit within %s", d)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(p.t, p.err)
	return 0
}

// terminate sends SIGTERM and requires a clean exit (status 0) within 10 s.
func (p *proc) terminate() { p.t.Helper(); p.stop(syscall.SIGTERM) }

// stop sends sig and requires a clean exit (status 0) within 10 s.
func (p *proc) stop(sig os.Signal) {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(sig))
	start := time.Now()
	require.Equal(p.t, 0, p.exitCode(10*time.Second), "exit status after %v; stderr:\n%s", sig, p.stderr.String())
	p.t.Logf("exited %s after %v", time.Since(start).Round(time.Millisecond), sig)
}

// kill kills the process with SIGKILL (kill -9) and waits for it.
func (p *proc) kill() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Kill())
	p.waitKilled()
}

// waitKilled waits (bounded) for the killed process to be reaped.
func (p *proc) waitKilled() {
	select {
	case <-p.done:
	case <-time.After(wait):
		p.t.Errorf("the killed bot was not reaped within %s", wait)
	}
}

// checkNoToken fails the test if either token is in the output.
func (p *proc) checkNoToken() {
	for _, out := range []struct{ name, text string }{{"stdout", p.stdout.String()}, {"stderr", p.stderr.String()}} {
		for _, tok := range []string{e2eDiscordToken, e2eTopggToken} {
			assert.NotContains(p.t, out.text, tok, "a token appeared on %s", out.name)
		}
	}
}

// records returns the JSON log records of stderr; any other line fails the test.
func (p *proc) records() []map[string]any {
	var out []map[string]any
	for line := range strings.Lines(p.stderr.String()) {
		var rec map[string]any
		if !assert.NoError(p.t, json.Unmarshal([]byte(line), &rec), "not a JSON log line: %q", line) {
			continue
		}
		out = append(out, rec)
	}
	return out
}

// countMsg counts the log records with message msg.
func (p *proc) countMsg(msg string) int {
	n := 0
	for line := range strings.Lines(p.stderr.String()) {
		if strings.Contains(line, `"msg":"`+msg+`"`) {
			n++
		}
	}
	return n
}

// waitMsg waits for a log record with message msg.
func (p *proc) waitMsg(msg string) {
	p.t.Helper()
	require.Eventually(p.t, func() bool { return p.countMsg(msg) > 0 || p.exited() }, wait, tick, "no log %q", msg)
	require.False(p.t, p.exited() && p.countMsg(msg) == 0, "the bot exited before logging %q; stderr:\n%s", msg, p.stderr.String())
}

// count counts the requests the fake Top.gg got with method on path.
func (e *e2e) count(method, path string) int {
	n := 0
	for _, r := range e.tg.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// waitPolls waits until the bot has polled the votes n more times.
func (e *e2e) waitPolls(n int) {
	e.t.Helper()
	target := e.count(http.MethodGet, votesPath) + n
	require.Eventually(e.t, func() bool { return e.count(http.MethodGet, votesPath) >= target }, wait, tick,
		"the bot stopped polling votes")
}

// lastMetrics returns the last v1 metrics posted, nil if none.
func (e *e2e) lastMetrics() map[string]int {
	m := e.tg.Metrics()
	if len(m) == 0 {
		return nil
	}
	return m[len(m)-1].Metrics
}

// waitServers waits until the last post says servers servers on both shards.
func (e *e2e) waitServers(servers int) {
	e.t.Helper()
	want := map[string]int{"server_count": servers, "shard_count": e2eShards}
	require.Eventually(e.t, func() bool {
		m := e.lastMetrics()
		return m != nil && maps.Equal(m, want)
	}, wait, tick, "server_count %d never posted; last post %v", servers, e.lastMetrics())
}

// grants returns, per user, the role grants (added) and removals the fake
// Discord accepted for the reward role.
func (e *e2e) grants() (added, removed map[string]int) {
	added, removed = map[string]int{}, map[string]int{}
	for _, c := range e.dc.RoleChanges() {
		assert.Equal(e.t, guild(0, 0), c.GuildID)
		assert.Equal(e.t, rewardRole, c.RoleID)
		if c.Added {
			added[c.UserID]++
		} else {
			removed[c.UserID]++
		}
	}
	return added, removed
}

// requireCommandsMatch requires that the commands published to the listing are
// the ones registered on Discord, normalised.
func (e *e2e) requireCommandsMatch() {
	e.t.Helper()
	require.Eventually(e.t, func() bool { _, ok := e.tg.Commands(); return ok }, wait, tick, "no commands published")
	onDiscord := e.dc.Commands()
	require.NotEmpty(e.t, onDiscord)
	norm, err := commands.Normalize(onDiscord)
	require.NoError(e.t, err)
	want, err := json.Marshal(norm)
	require.NoError(e.t, err)
	got, _ := e.tg.Commands()
	require.JSONEq(e.t, string(want), string(got))
}

// makeVotes returns n votes by distinct users, created in the last half hour
// and active for hours.
func makeVotes(n int) []topggtest.Vote {
	now := time.Now().UTC()
	out := make([]topggtest.Vote, n)
	for i := range out {
		created := now.Add(-30 * time.Minute).Add(time.Duration(i) * time.Second)
		out[i] = topggtest.Vote{
			UserID:     fmt.Sprintf("800%015d", i),
			PlatformID: fmt.Sprintf("300%015d", i),
			Weight:     1 + i%2,
			CreatedAt:  created,
			ExpiresAt:  created.Add(12 * time.Hour),
		}
	}
	return out
}

// syncBuffer collects the log lines the code under test writes from its goroutines.
type syncBuffer = testlog.Buffer

// requireRewardedAtMostTwice checks, once every vote has a grant, that each of
// votes was rewarded once, or twice when the process died between a handler's
// return and its record (at most the VoteConcurrency default, 4, handlers
// running at once); it returns how many were rewarded twice.
func requireRewardedAtMostTwice(t *testing.T, votes []topggtest.Vote, added map[string]int) int {
	t.Helper()
	twice := 0
	for _, v := range votes {
		n := added[v.PlatformID]
		assert.GreaterOrEqual(t, n, 1, v.PlatformID)
		assert.LessOrEqual(t, n, 2, v.PlatformID)
		if n > 1 {
			twice++
		}
	}
	assert.LessOrEqual(t, twice, 4, "more votes rewarded twice than handlers running at once")
	return twice
}

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
func (hp *hookProxy) url() string { return hp.srv.URL + "/topgg/webhook" }

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
