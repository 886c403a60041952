package plugin_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
