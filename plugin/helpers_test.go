package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

const (
	metricsPath  = "/v1/projects/@me/metrics"
	commandsPath = "/v1/projects/@me/commands"
	votesPath    = "/v1/projects/@me/votes"

	// wait bounds every Eventually: generous for a loaded 2-core machine
	// under -race, never reached when the code works.
	wait = 10 * time.Second
	tick = 5 * time.Millisecond
)

// world is one test's fake Discord (with one real discordgo session per
// shard, not yet open) and fake Top.gg (with a real client).
type world struct {
	t        *testing.T
	dc       *discordtest.Server
	tg       *topggtest.Server
	client   *topgg.Client
	sessions []*discordgo.Session
	shards   int
	dir      string // the state's directory (w.state)

	runs testkit.Runs[*plugin.Plugin]
	mu   sync.Mutex
	st   *boltstate.State
}

type worldSpec struct {
	shards   int // default 1
	perShard int // guilds per shard at the start
	tgOpts   []topggtest.Option
}

// newWorld starts both fakes and makes the sessions. t.Cleanup closes the
// sessions first, then the servers, as discordtest asks.
func newWorld(t *testing.T, spec worldSpec) *world {
	t.Helper()
	if spec.shards == 0 {
		spec.shards = 1
	}
	dc := testkit.Discord(t, slices.Repeat([]int{spec.perShard}, spec.shards))
	tg := testkit.TopGG(t, dc, spec.tgOpts...)
	w := &world{t: t, dc: dc, tg: tg, client: newClient(t, tg), shards: spec.shards, dir: t.TempDir()}
	w.sessions = testkit.Sessions(t, dc, spec.shards)
	return w
}

// newClient returns a real client for tg that retries twice, quickly.
func newClient(t *testing.T, tg *topggtest.Server) *topgg.Client {
	t.Helper()
	client, err := tg.NewClient(topgg.WithRetryPolicy(topgg.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}))
	require.NoError(t, err)
	return client
}

// config returns a Config with every job on and intervals short enough for a test.
func (w *world) config() plugin.Config {
	return plugin.Config{
		Autopost:         "v1",
		AutopostInterval: 50 * time.Millisecond,
		SyncCommands:     new(true),
		VotePollInterval: new(20 * time.Millisecond),
		VoteLookback:     13 * time.Hour, // more than a vote's lifetime, so Active can be Covered
	}
}

// state returns the world's state, a boltstate in w.dir opened at the first
// call and closed at the end of the test (after the Runs w.start began).
func (w *world) state() *boltstate.State {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.st == nil {
		if w.dir == "" {
			w.dir = w.t.TempDir()
		}
		st, err := boltstate.Open(w.dir)
		require.NoError(w.t, err)
		w.st = st
		w.t.Cleanup(func() { assert.NoError(w.t, st.Close()) })
	}
	return w.st
}

// plugin makes a plugin on the world's state and attaches every session.
func (w *world) plugin(cfg plugin.Config, opts ...plugin.Option) *plugin.Plugin {
	w.t.Helper()
	// Quiet by default (the plugin's own default is slog.Default()), on the
	// world's state; a test's WithLogger or WithState comes later and wins.
	opts = append([]plugin.Option{plugin.WithLogger(slog.New(slog.DiscardHandler)), plugin.WithState(w.state())}, opts...)
	p, err := plugin.New(w.client, cfg, opts...)
	require.NoError(w.t, err)
	require.NoError(w.t, p.Attach(w.sessions...))
	return p
}

// start runs p in its own goroutine until w.stop or the end of the test
// (before the sessions and servers close).
func (w *world) start(p *plugin.Plugin) { w.runs.Start(w.t, p, p.Run) }

// stop cancels p's Run and returns its error once it returned.
func (w *world) stop(p *plugin.Plugin) error { return w.runs.Stop(p) }

// open opens the sessions of the given shards (all when none is given).
func (w *world) open(shards ...int) {
	w.t.Helper()
	if len(shards) == 0 {
		for i := range w.shards {
			shards = append(shards, i)
		}
	}
	for _, i := range shards {
		require.NoError(w.t, w.sessions[i].Open())
	}
}

func (w *world) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	w.t.Cleanup(cancel)
	return ctx
}

// count counts the requests the fake Top.gg got with method on path.
func (w *world) count(method, path string) int {
	n := 0
	for _, r := range w.tg.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// waitPolls waits until the vote poller has sent n more requests: a clock
// made of the plugin's own activity, for checks that something did not happen.
func (w *world) waitPolls(n int) {
	w.t.Helper()
	target := w.count(http.MethodGet, votesPath) + n
	require.Eventually(w.t, func() bool { return w.count(http.MethodGet, votesPath) >= target },
		wait, tick, "the vote poller stopped polling")
}

// startPolled starts p and waits for its first vote poll, counted from
// before the start: the poll may come before a later count is taken, and with
// a long interval no second one comes.
func (w *world) startPolled(p *plugin.Plugin) {
	w.t.Helper()
	target := w.count(http.MethodGet, votesPath) + 1
	w.start(p)
	require.Eventually(w.t, func() bool { return w.count(http.MethodGet, votesPath) >= target },
		wait, tick, "the vote poller never polled")
}

// lastServers returns the server_count of the last metrics post, -1 if none.
func (w *world) lastServers() int {
	m := w.tg.Metrics()
	if len(m) == 0 {
		return -1
	}
	return m[len(m)-1].Metrics["server_count"]
}

// requirePublished requires that the commands published to the listing are cmds
// in their normalised form.
func (w *world) requirePublished(cmds []*discordgo.ApplicationCommand) {
	w.t.Helper()
	norm, err := commands.Normalize(cmds)
	require.NoError(w.t, err)
	want, err := json.Marshal(norm)
	require.NoError(w.t, err)
	require.Eventually(w.t, func() bool { _, ok := w.tg.Commands(); return ok }, wait, tick, "no commands published")
	got, _ := w.tg.Commands()
	require.JSONEq(w.t, string(want), string(got))
}

// recorder counts handler calls per vote key, for the reward and expiry handlers.
type recorder struct {
	testkit.Counter
	mu    sync.Mutex
	votes []voterewards.Vote
}

func newRecorder() *recorder { return &recorder{} }

func (r *recorder) handle(_ context.Context, v voterewards.Vote) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Add(v.Key())
	r.votes = append(r.votes, v)
	return nil
}

func (r *recorder) distinct() int            { return r.Distinct() }
func (r *recorder) total() int               { return r.Total() }
func (r *recorder) snapshot() map[string]int { return r.Snapshot() }

// votes makes n votes by distinct users, created in the last half hour and
// active for another hour.
func votes(n int) []topggtest.Vote {
	now := time.Now().UTC()
	out := make([]topggtest.Vote, n)
	for i := range out {
		created := now.Add(-30 * time.Minute).Add(time.Duration(i) * time.Second)
		out[i] = topggtest.Vote{
			UserID:     userID(800, i),
			PlatformID: userID(300, i),
			Weight:     1 + i%2,
			CreatedAt:  created,
			ExpiresAt:  created.Add(time.Hour + 30*time.Minute),
		}
	}
	return out
}

// userID returns an 18-digit snowflake-shaped id: a 3-digit prefix, then i.
func userID(prefix, i int) string { return fmt.Sprintf("%03d%015d", prefix, i) }

// logBuffer collects the log lines the code under test writes from its goroutines.
type logBuffer = testlog.Buffer

// sendVoteOnceListening waits until the plugin's receiver at addr accepts
// connections, then sends it one signed vote.create in the background; the
// channel is closed once the request has returned (its answer does not
// matter: the tests using it cut the server off).
func sendVoteOnceListening(t *testing.T, addr string) <-chan struct{} {
	t.Helper()
	now := time.Now()
	body := []byte(`{"type":"vote.create","data":{"id":"1","weight":1,"created_at":"` +
		now.UTC().Format(time.RFC3339Nano) + `","expires_at":"` + now.Add(12*time.Hour).UTC().Format(time.RFC3339Nano) +
		`","project":{"id":"2","type":"bot","platform":"discord","platform_id":"3"},"user":{"id":"4","platform_id":"5","name":"u","avatar_url":""}}}`)
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		req, err := webhook.NewRequest(context.Background(), "http://"+addr+"/topgg/webhook", testSecret, now, body)
		if !assert.NoError(t, err) {
			return
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
		}
	}()
	return sent
}

// runUntilStoreEntered runs a plugin whose only job is its webhook receiver,
// on store, sends it one vote and waits until entered says the store holds
// the delivery. It returns the Run's cancel, its result and the channel
// closed once the delivery's request returned.
func runUntilStoreEntered(t *testing.T, store voterewards.State, entered <-chan struct{}, log *slog.Logger) (context.CancelFunc, <-chan error, <-chan struct{}) {
	t.Helper()
	w := newWorld(t, worldSpec{})
	// Port 0 and WebhookAddr, not a port picked free beforehand: another
	// test may take that port before the plugin listens on it.
	cfg := plugin.Config{
		Autopost: "off", SyncCommands: new(false), VotePollInterval: new(time.Hour),
		WebhookAddr: "127.0.0.1:0", WebhookSecrets: plugin.WebhookSecrets{testSecret},
	}
	p, err := plugin.New(w.client, cfg, plugin.WithLogger(log),
		plugin.WithState(store), plugin.WithRewardHandler(func(context.Context, voterewards.Vote) error { return nil }))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()
	require.Eventually(t, func() bool { return p.WebhookAddr() != nil }, 10*time.Second, 5*time.Millisecond)
	sent := sendVoteOnceListening(t, p.WebhookAddr().String())
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the webhook vote never reached the store")
	}
	return cancel, ran, sent
}
