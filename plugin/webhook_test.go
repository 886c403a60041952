package plugin_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/topgg/webhook"
	"github.com/dblkit/go-topgg/voterewards"
)

const testSecret = "whs_plugin_test_secret"

// deliverToPlugin waits for p's own webhook server (Config.WebhookAddr) to
// listen, and points the fake Top.gg at it.
func deliverToPlugin(t *testing.T, w *world, p *plugin.Plugin) string {
	t.Helper()
	var addr atomic.Pointer[string]
	require.Eventually(t, func() bool {
		a := p.WebhookAddr()
		if a == nil {
			return false
		}
		s := a.String()
		addr.Store(&s)
		return true
	}, wait, tick, "the webhook server does not listen")
	url := "http://" + *addr.Load() + "/topgg/webhook"
	require.NoError(t, w.tg.AddWebhook(url, testSecret))
	return url
}

// originRecorder records each reward with the source that delivered it.
type originRecorder struct {
	mu      sync.Mutex
	origins map[string][]voterewards.Origin
	queries map[string]map[string]string
}

func (r *originRecorder) handle(_ context.Context, v voterewards.Vote) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.origins[v.PlatformID] = append(r.origins[v.PlatformID], v.Origin)
	if v.Hook != nil {
		r.queries[v.PlatformID] = v.Hook.Query
	}
	return nil
}

func (r *originRecorder) get(id string) ([]voterewards.Origin, map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]voterewards.Origin(nil), r.origins[id]...), r.queries[id]
}

// TestWebhookVoteRewardedOnceAcrossSources: a vote that reaches the plugin by a
// signed webhook and by the vote history is rewarded once, with the webhook's
// query when the webhook came first; the delivery is answered 204.
func TestWebhookVoteRewardedOnceAcrossSources(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	rec := &originRecorder{origins: map[string][]voterewards.Origin{}, queries: map[string]map[string]string{}}
	cfg := votesOnly(w)
	cfg.VotePollInterval = new(time.Hour) // the first poll at start, then none: the webhook comes first
	cfg.WebhookSecrets = plugin.WebhookSecrets{testSecret}
	cfg.WebhookAddr = "127.0.0.1:0"
	p := w.plugin(cfg, plugin.WithRewardHandler(rec.handle))
	w.startPolled(p)
	deliverToPlugin(t, w, p)

	v := votes(1)[0]
	v.CreatedAt, v.ExpiresAt = time.Now().UTC(), time.Now().UTC().Add(12*time.Hour)
	w.tg.AddVoteQuery("ref=abc", v)
	require.Eventually(t, func() bool { o, _ := rec.get(v.PlatformID); return len(o) == 1 }, wait, tick)
	origins, query := rec.get(v.PlatformID)
	assert.Equal(t, []voterewards.Origin{voterewards.OriginWebhook}, origins)
	assert.Equal(t, map[string]string{"ref": "abc"}, query)
	require.Eventually(t, func() bool { d := w.tg.Deliveries(); return len(d) == 1 && d[0].Done }, wait, tick)
	d := w.tg.Deliveries()[0]
	require.Len(t, d.Attempts, 1)
	assert.Equal(t, http.StatusNoContent, d.Attempts[0].Status)

	// A second Run polls the history at once: the same vote is not rewarded again.
	require.NoError(t, w.stop(p))
	w.startPolled(p)
	origins, _ = rec.get(v.PlatformID)
	assert.Len(t, origins, 1, "the history's copy of a webhook vote was rewarded again")
}

// TestWebhookWhileNotRunningIs500: between Runs a vote cannot be stored, so it is
// answered 500 (Top.gg retries; the poll recovers it) and nothing is rewarded.
func TestWebhookWhileNotRunningIs500(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	cfg := votesOnly(w)
	cfg.WebhookSecrets = plugin.WebhookSecrets{testSecret}
	rewards := newRecorder()
	p := w.plugin(cfg, plugin.WithRewardHandler(rewards.handle))
	h, err := p.WebhookHandler()
	require.NoError(t, err)
	body := []byte(`{"type":"vote.create","data":{"id":"1","weight":1,"created_at":"2026-02-09T00:47:14.2510149+00:00",` +
		`"expires_at":"2026-02-09T12:47:14.2510149+00:00","project":{"id":"2","type":"bot","platform":"discord","platform_id":"3"},` +
		`"user":{"id":"4","platform_id":"5","name":"a","avatar_url":""}}}`)
	req, err := webhook.NewRequest(context.Background(), "http://127.0.0.1/hook", testSecret, time.Now(), body)
	require.NoError(t, err)
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	assert.Equal(t, http.StatusInternalServerError, rr.Code)
	assert.Zero(t, rewards.total())
}

// TestWebhookConfigMistakes: a receiver address without a secret, webhooks
// without the poll that reconciles them, and a relative path are refused, naming
// the field.
func TestWebhookConfigMistakes(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		cfg   plugin.Config
		field string
	}{
		"address without secret": {plugin.Config{WebhookAddr: ":8080"}, "plugin.Config.WebhookSecrets"},
		"poll off":               {plugin.Config{WebhookSecrets: plugin.WebhookSecrets{testSecret}, VotePollInterval: new(time.Duration(0))}, "plugin.Config.VotePollInterval"},
		"relative path":          {plugin.Config{WebhookSecrets: plugin.WebhookSecrets{testSecret}, WebhookPath: "hook"}, "plugin.Config.WebhookPath"},
		"auth with a newline":    {plugin.Config{WebhookAuth: "v0-auth\n"}, "plugin.Config.WebhookAuth"},
		"secret with a space":    {plugin.Config{WebhookSecrets: plugin.WebhookSecrets{testSecret, "whs_x y"}}, "plugin.Config.WebhookSecrets"},
		"secret without whs_":    {plugin.Config{WebhookSecrets: plugin.WebhookSecrets{webhook.Secret(testSecret[len("whs_"):])}}, "plugin.Config.WebhookSecrets"},
	} {
		t.Run(name, func(t *testing.T) {
			err := c.cfg.Validate(nil)
			var ce *topgg.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.field, ce.Field)
			assert.NotContains(t, err.Error(), testSecret)
		})
	}
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	p, err := plugin.New(newClient(t, tg), plugin.Config{Autopost: "off", SyncCommands: new(false)},
		plugin.WithState(voterewards.NewMemoryStore()))
	require.NoError(t, err)
	_, err = p.WebhookHandler()
	assert.ErrorIs(t, err, topgg.ErrNotConfigured)
}

// TestWebhookSecretsFromEnvironment: TOPGG_WEBHOOK_SECRET is a comma-separated
// list, and neither it nor TOPGG_WEBHOOK_AUTH is ever quoted or printed.
func TestWebhookSecretsFromEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOPGG_WEBHOOK_SECRET": "whs_a, whs_b", "TOPGG_WEBHOOK_AUTH": "v0-auth-value"}
	cfg, err := plugin.LoadConfig(context.Background(), envconfig.MapLookuper(env))
	require.NoError(t, err)
	assert.Equal(t, plugin.WebhookSecrets{"whs_a", "whs_b"}, cfg.WebhookSecrets)
	assert.Equal(t, webhook.Secret("v0-auth-value"), cfg.WebhookAuth)
	for _, s := range []string{"whs_a", "whs_b", "v0-auth-value"} {
		assert.NotContains(t, fmt.Sprintf("%v %+v", cfg, cfg), s)
	}
}

// TestWebhookAddrWhileServing: WebhookAddr is nil before Run, the bound
// address (the port picked for :0) while Run serves, where a delivery is
// answered, and nil once Run returned; a plugin that serves no receiver
// itself has none.
func TestWebhookAddrWhileServing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	cfg := votesOnly(w)
	cfg.WebhookSecrets = plugin.WebhookSecrets{testSecret}
	mounted := w.plugin(cfg)
	assert.Nil(t, mounted.WebhookAddr(), "no Config.WebhookAddr: the bot mounts WebhookHandler itself")

	cfg.WebhookAddr = "127.0.0.1:0"
	p := w.plugin(cfg)
	assert.Nil(t, p.WebhookAddr(), "before Run")
	w.start(p)
	url := deliverToPlugin(t, w, p)
	assert.Regexp(t, `^http://127\.0\.0\.1:[1-9][0-9]*/`, url)
	w.tg.SendWebhookTest()
	require.Eventually(t, func() bool { d := w.tg.Deliveries(); return len(d) == 1 && d[0].Done }, wait, tick)
	assert.True(t, w.tg.Deliveries()[0].Delivered())
	require.NoError(t, w.stop(p))
	assert.Nil(t, p.WebhookAddr(), "after Run")
}

// memStore is what voterewards.NewMemoryStore returns: a State and a Feed.
type memStore interface {
	voterewards.State
	voterewards.Feed
}

func newMemStore() memStore { return voterewards.NewMemoryStore().(memStore) }

// panicStore is a vote store whose Ingest panics on a webhook's vote, as a
// store with a bug would.
type panicStore struct{ memStore }

func (s panicStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	if len(votes) > 0 && votes[0].Origin != voterewards.OriginHistory {
		panic("store bug")
	}
	return s.memStore.Ingest(ctx, cp, votes, grace)
}

// TestWebhookStorePanicIsAnswered500: a panic in the vote store under the
// plugin's own webhook server reaches Top.gg as a 500 (retried), not as a
// dropped connection, and the server goes on serving.
func TestWebhookStorePanicIsAnswered500(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{tgOpts: []topggtest.Option{topggtest.WithWebhookRetries(2*time.Second, 10*time.Millisecond, 10*time.Millisecond)}})
	cfg := votesOnly(w)
	cfg.VotePollInterval = new(time.Hour)
	cfg.WebhookSecrets = plugin.WebhookSecrets{testSecret}
	cfg.WebhookAddr = "127.0.0.1:0"
	rec := &originRecorder{origins: map[string][]voterewards.Origin{}, queries: map[string]map[string]string{}}
	p := w.plugin(cfg, plugin.WithState(panicStore{newMemStore()}), plugin.WithRewardHandler(rec.handle))
	w.start(p)
	deliverToPlugin(t, w, p)

	v := votes(1)[0]
	v.CreatedAt, v.ExpiresAt = time.Now().UTC(), time.Now().UTC().Add(12*time.Hour)
	w.tg.AddVote(v)
	w.tg.SendWebhookTest()
	require.Eventually(t, func() bool {
		d := w.tg.Deliveries()
		return len(d) == 2 && d[0].Done && d[1].Done
	}, wait, tick)
	d := w.tg.Deliveries()
	for _, a := range d[0].Attempts { // the vote: 500 on every attempt, each an answer
		assert.NoError(t, a.Err)
		assert.Equal(t, http.StatusInternalServerError, a.Status)
	}
	assert.True(t, d[1].Delivered(), "the server serves on after a panic")
	origins, _ := rec.get(v.PlatformID)
	assert.NotContains(t, origins, voterewards.OriginWebhook, "a vote whose store panicked was rewarded")
}

// slowStore is a memory store whose Ingest, once its context ends, takes a
// moment more to return (a commit finishing), and counts the calls in it.
type slowStore struct {
	memStore
	entered  chan struct{}
	inflight atomic.Int32
}

func (s *slowStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	if cp != nil { // the poll: not the call under test
		return s.memStore.Ingest(ctx, cp, votes, grace)
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	time.Sleep(300 * time.Millisecond) // the tail that must not outlive Run
	return nil, ctx.Err()
}

// TestWebhookRequestDoesNotOutliveRun: a delivery still being stored when the
// shutdown's grace ends is cut off, and Run returns only once its handler
// has returned: nothing of the webhook server outlives Run. (This test
// waits out the server's 5 s shutdown grace.)
func TestWebhookRequestDoesNotOutliveRun(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the webhook server's 5 s shutdown grace")
	}
	t.Parallel()
	store := &slowStore{memStore: newMemStore(), entered: make(chan struct{}, 1)}
	cancel, ran, sent := runUntilStoreEntered(t, store, store.entered, slog.New(slog.DiscardHandler))
	cancel()
	select {
	case err := <-ran:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
	}
	assert.Zero(t, store.inflight.Load(), "a webhook handler was still running when Run returned")
	<-sent
}

// deafStore is a memory store whose webhook Ingest blocks until released,
// whatever its context says.
type deafStore struct {
	memStore
	rel     *releaser
	entered chan struct{}
}

func (s *deafStore) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	if cp != nil { // the poll
		return s.memStore.Ingest(ctx, cp, votes, grace)
	}
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.rel.ch
	return nil, ctx.Err()
}

// TestWebhookStopIsBoundedWhenAHandlerIgnoresItsContext: a webhook delivery
// stuck in a Store that ignores its context holds Run for the server's
// shutdown grace (5 s) and one second more, not for ever. (This test waits
// out the 5 s.)
func TestWebhookStopIsBoundedWhenAHandlerIgnoresItsContext(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the webhook server's 5 s shutdown grace")
	}
	t.Parallel()
	store := &deafStore{memStore: newMemStore(), rel: newReleaser(t), entered: make(chan struct{}, 1)}
	var logs logBuffer
	cancel, ran, sent := runUntilStoreEntered(t, store, store.entered, logs.Logger())
	start := time.Now()
	cancel()
	select {
	case err := <-ran:
		require.NoError(t, err)
	case <-time.After(12 * time.Second):
		t.Fatal("Run waits for a webhook handler that ignores its context")
	}
	assert.Less(t, time.Since(start), 5*time.Second+time.Second+2*time.Second)
	assert.Contains(t, logs.String(), "webhook handlers ignored their cancelled context")
	store.rel.release()
	<-sent
}

const benchSecret = "whs_bench_secret"

// benchReceiver is a plugin with votes only, its state in a bbolt file (fsync
// on, the default), polling a fake Top.gg every poll, with its webhook
// receiver mounted on a loopback HTTP server. onReward is its reward handler.
type benchReceiver struct {
	tg     *topggtest.Server
	srv    *httptest.Server
	client *http.Client
	// recorded counts the deliveries the plugin has recorded in its store,
	// its last write for a vote.
	recorded *atomic.Int64
}

// benchObserver counts the deliveries the plugin has recorded.
type benchObserver struct{ recorded *atomic.Int64 }

func (benchObserver) ObservePost(autopost.Result)        {}
func (benchObserver) ObserveSync(commands.Result, error) {}
func (benchObserver) ObserveWebhook(error)               {}
func (benchObserver) ObserveLease(fleet.LeaseState)      {}
func (o benchObserver) ObserveVote(e voterewards.Event) {
	if e.Type == voterewards.EventDelivered {
		o.recorded.Add(1)
	}
}

func newBenchReceiver(b *testing.B, poll time.Duration, onReward voterewards.Handler) *benchReceiver {
	b.Helper()
	tg, err := topggtest.NewServer()
	require.NoError(b, err)
	b.Cleanup(tg.Close)
	client, err := tg.NewClient()
	if err != nil {
		b.Fatal(err)
	}
	cfg := plugin.Config{
		Autopost: "off", SyncCommands: new(false), VotePollInterval: &poll,
		WebhookSecrets: plugin.WebhookSecrets{benchSecret},
	}
	recorded := new(atomic.Int64)
	st, err := boltstate.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	p, err := plugin.New(client, cfg, plugin.WithLogger(slog.New(slog.DiscardHandler)), plugin.WithState(st), plugin.WithRewardHandler(onReward),
		plugin.WithMetrics(benchObserver{recorded}))
	if err != nil {
		b.Fatal(err)
	}
	h, err := p.WebhookHandler()
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	hc := &http.Client{Transport: tr}
	b.Cleanup(hc.CloseIdleConnections)
	// Wait for the first poll: Run is then past its start, and a webhook is
	// stored at once.
	deadline := time.Now().Add(10 * time.Second)
	for len(tg.Requests()) == 0 {
		if time.Now().After(deadline) {
			b.Fatal("no first poll")
		}
		time.Sleep(time.Millisecond)
	}
	return &benchReceiver{tg: tg, srv: srv, client: hc, recorded: recorded}
}

// benchVoteBody is a vote.create of the n-th bench voter, created at.
func benchVoteBody(n int64, at time.Time) []byte {
	ts := at.UTC().Format("2006-01-02T15:04:05.0000000") + "+00:00"
	exp := at.Add(12*time.Hour).UTC().Format("2006-01-02T15:04:05.0000000") + "+00:00"
	return fmt.Appendf(nil, `{"type":"vote.create","data":{"id":"%d","weight":1,"created_at":%q,"expires_at":%q,`+
		`"project":{"id":"803190510032756736","type":"bot","platform":"discord","platform_id":"1026525568344264724"},`+
		`"user":{"id":"7%017d","platform_id":"3%017d","name":"voter","avatar_url":""}}}`,
		808499215864008704+n, ts, exp, n, n)
}

// post delivers a signed body to url and fails the benchmark unless it is
// answered 2xx.
func (r *benchReceiver) post(b *testing.B, url string, body []byte) {
	req, err := webhook.NewRequest(context.Background(), url, benchSecret, time.Now(), body)
	if err != nil {
		b.Error(err)
		return
	}
	resp, err := r.client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b.Errorf("answered %d", resp.StatusCode)
	}
}

// percentile returns the p-th percentile (0..1) of sorted durations, in ms.
func percentile(sorted []time.Duration, p float64) float64 {
	i := min(int(p*float64(len(sorted))), len(sorted)-1)
	return float64(sorted[i]) / float64(time.Millisecond)
}

// BenchmarkWebhookLatency measures the time from sending a signed vote.create
// over loopback HTTP to the plugin's receiver to the reward handler's call,
// over 1,000 deliveries, with the bbolt store (fsync on): p50-ms, p90-ms and
// p99-ms. The same deliveries go to a bare floor (newFloorReceiver: net/http,
// crypto/hmac, encoding/json, bbolt with fsync) in the same run, in blocks of
// 25 a side, the side that goes first alternating, so that a slow moment of
// the shared disk falls on both. Within a block each delivery is sent as soon
// as the last one's handler ran (back to back: the plugin's record of one
// delivery shares the next one's commit); a plugin block ends once it has
// recorded every delivery, so that none of its writes falls on the floor's
// block: floor-p50-ms..., and the ratios p50-x, p90-x, p99-x (goal: p99
// within 1.5x of the floor). Beside it, the polling path: the time from a
// poll request reaching the fake Top.gg to the handler's call
// (poll-request-ms, the request plus delivery), and what a vote waits on
// average at the default interval (1m): half of it plus that (poll-p50-ms),
// and the ratio to the webhook's p50. Run it with -benchtime=1x.
//
//	go test -run '^$' -bench BenchmarkWebhookLatency -benchtime=1x -count=5 ./plugin
func BenchmarkWebhookLatency(b *testing.B) {
	for range b.N {
		pollLatency(b, webhookLatency(b))
	}
}

// webhookLatency reports the webhook path beside its floor and returns the
// plugin's p50.
func webhookLatency(b *testing.B) time.Duration {
	const deliveries, block = 1000, 25
	got := make(chan time.Time, 1)
	r := newBenchReceiver(b, time.Hour, func(context.Context, voterewards.Vote) error {
		got <- time.Now()
		return nil
	})
	urls := [2]string{r.srv.URL, newFloorReceiver(b, benchSecret, func(string) { got <- time.Now() })}
	bodies := make([][]byte, deliveries)
	base := time.Now().Add(-time.Hour)
	for i := range bodies {
		bodies[i] = benchVoteBody(int64(i), base.Add(time.Duration(i)*time.Millisecond))
	}
	var lat, ans [2][]time.Duration // plugin, floor: to the handler's call, to the answer
	for first := 0; first < deliveries; first += block {
		for k := range 2 {
			side := (first/block + k) % 2 // who goes first alternates
			for _, body := range bodies[first:min(first+block, deliveries)] {
				start := time.Now()
				r.post(b, urls[side], body)
				ans[side] = append(ans[side], time.Since(start))
				select {
				case at := <-got:
					lat[side] = append(lat[side], at.Sub(start))
				case <-time.After(10 * time.Second):
					b.Fatal("the reward handler was not called")
				}
			}
			if side == 0 {
				waitRecorded(b, r.recorded, int64(len(lat[0])))
			}
		}
	}
	reportLatency(b, lat, ans)
	return lat[0][len(lat[0])/2]
}

// waitRecorded waits until the plugin has recorded n deliveries.
func waitRecorded(b *testing.B, recorded *atomic.Int64, n int64) {
	deadline := time.Now().Add(10 * time.Second)
	for recorded.Load() < n {
		if time.Now().After(deadline) {
			b.Fatal("the deliveries were not recorded")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// reportLatency reports the percentiles of the handler calls (lat) and of
// the answers (ans) of the plugin ([0]) and the floor ([1]), and their ratios;
// it sorts both.
func reportLatency(b *testing.B, lat, ans [2][]time.Duration) {
	for side, prefix := range []string{"", "floor-"} {
		slices.Sort(lat[side])
		for _, p := range []struct {
			name string
			q    float64
		}{{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}, {"max", 1}} {
			b.ReportMetric(percentile(lat[side], p.q), prefix+p.name+"-ms")
			if side == 1 && p.q < 1 {
				b.ReportMetric(percentile(lat[0], p.q)/percentile(lat[1], p.q), p.name+"-x")
			}
		}
	}
	// The answer (204 once the vote is durable) beside the handler's call:
	// the plugin calls the handler from its delivery worker after answering,
	// the floor in the request before answering.
	for side := range ans {
		slices.Sort(ans[side])
	}
	for _, p := range []struct {
		name string
		q    float64
	}{{"p50", 0.50}, {"p99", 0.99}} {
		b.ReportMetric(percentile(ans[0], p.q), "answer-"+p.name+"-ms")
		b.ReportMetric(percentile(ans[1], p.q), "floor-answer-"+p.name+"-ms")
		b.ReportMetric(percentile(ans[0], p.q)/percentile(ans[1], p.q), "answer-"+p.name+"-x")
	}
}

// pollLatency reports the polling path, and its ratio to webhookP50.
func pollLatency(b *testing.B, webhookP50 time.Duration) {
	const votes, interval = 50, 100 * time.Millisecond
	var mu sync.Mutex
	handled := map[string]time.Time{}
	r := newBenchReceiver(b, interval, func(_ context.Context, v voterewards.Vote) error {
		mu.Lock()
		handled[v.PlatformID] = time.Now()
		mu.Unlock()
		return nil
	})
	var cost []time.Duration
	for i := range votes {
		id := fmt.Sprintf("4%017d", i)
		added := time.Now()
		r.tg.AddVote(topggtest.Vote{UserID: fmt.Sprintf("8%017d", i), PlatformID: id, CreatedAt: added.UTC()})
		var at time.Time
		deadline := time.Now().Add(10 * time.Second)
		for at.IsZero() {
			if time.Now().After(deadline) {
				b.Fatal("the poll did not reward the vote")
			}
			time.Sleep(200 * time.Microsecond)
			mu.Lock()
			at = handled[id]
			mu.Unlock()
		}
		// The poll that read it: the last request before the handler ran.
		var pollAt time.Time
		for _, req := range r.tg.Requests() {
			if req.Path == "/v1/projects/@me/votes" && req.At.Before(at) {
				pollAt = req.At
			}
		}
		cost = append(cost, at.Sub(pollAt))
	}
	slices.Sort(cost)
	req := percentile(cost, 0.5)
	expected := float64(plugin.DefaultVotePollInterval/2)/float64(time.Millisecond) + req
	b.ReportMetric(req, "poll-request-ms")
	b.ReportMetric(expected, "poll-p50-ms")
	if webhookP50 > 0 {
		b.ReportMetric(expected/(float64(webhookP50)/float64(time.Millisecond)), "poll/webhook")
	}
}

// BenchmarkWebhookThroughput measures sustained vote.create deliveries per
// second through the receiver's real HTTP handler (loopback, keep-alive, 64
// concurrent senders per CPU), each answered once its vote is durable in the
// bbolt store (fsync on; concurrent deliveries share commits), until every
// vote's reward handler (a no-op) has run. Goal: 2,000/s. One op is one
// delivery.
func BenchmarkWebhookThroughput(b *testing.B) {
	var rewarded atomic.Int64
	r := newBenchReceiver(b, time.Hour, func(context.Context, voterewards.Vote) error {
		rewarded.Add(1)
		return nil
	})
	var next atomic.Int64
	base := time.Now().Add(-time.Hour)
	b.SetParallelism(64)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			r.post(b, r.srv.URL, benchVoteBody(n, base.Add(time.Duration(n)*time.Microsecond)))
		}
	})
	deadline := time.Now().Add(time.Minute)
	for rewarded.Load() < next.Load() {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d votes rewarded", rewarded.Load(), next.Load())
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "webhooks/s")
}

// newFloorReceiver starts the floor BenchmarkWebhookLatency compares the
// plugin with: a bare receiver written with net/http, crypto/hmac,
// encoding/json and bbolt (fsync on, bbolt's default) and nothing of this
// module. Per delivery: it reads the body (bounded), checks X-Topgg-Signature
// (t=<unix>,v1=<hex HMAC-SHA256 of "t.body">, the time within 5 minutes),
// decodes the vote, stores it in one bbolt transaction unless its id is
// already there (dedup), calls onReward and answers 204. It returns the
// receiver's URL.
func newFloorReceiver(b *testing.B, secret string, onReward func(voteID string)) string {
	b.Helper()
	db, err := bolt.Open(filepath.Join(b.TempDir(), "floor.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	bucket := []byte("votes")
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucket); return err }); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || !floorSigned(secret, r.Header.Get("X-Topgg-Signature"), body) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev struct {
			Type string `json:"type"`
			Data struct {
				ID        string    `json:"id"`
				CreatedAt time.Time `json:"created_at"`
				User      struct {
					PlatformID string `json:"platform_id"`
				} `json:"user"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &ev); err != nil || ev.Type != "vote.create" || ev.Data.ID == "" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		fresh := false
		err = db.Update(func(tx *bolt.Tx) error {
			bk := tx.Bucket(bucket)
			if bk.Get([]byte(ev.Data.ID)) != nil {
				return nil
			}
			fresh = true
			return bk.Put([]byte(ev.Data.ID), body)
		})
		if err != nil {
			http.Error(w, "store", http.StatusInternalServerError)
			return
		}
		if fresh {
			onReward(ev.Data.ID)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// floorSigned checks a Top.gg v1 signature header over body.
func floorSigned(secret, header string, body []byte) bool {
	var ts, sig string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(t, 0)).Abs() > 5*time.Minute {
		return false
	}
	want, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return hmac.Equal(m.Sum(nil), want)
}
