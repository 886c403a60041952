package shards_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/shards"
	"github.com/dblkit/go-topgg/topgg"
)

// TestOpenAndClose: Open connects every shard (each gets its guilds), Close
// closes them; a Group is opened once and closed any number of times.
func TestOpenAndClose(t *testing.T) {
	t.Parallel()
	const n = 3
	w := newWorld(t, n)
	var mu sync.Mutex
	seen := map[int]int{} // shard -> GUILD_CREATEs
	for _, s := range w.group.Sessions() {
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.GuildCreate) {
			mu.Lock()
			seen[s.ShardID]++
			mu.Unlock()
		})
	}
	require.NoError(t, w.group.Open(w.ctx()))
	require.NoError(t, w.srv.WaitConnected(w.ctx(), n))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n
	}, quick, time.Millisecond)
	require.ErrorIs(t, w.group.Open(w.ctx()), shards.ErrOpened)

	require.NoError(t, w.group.Close())
	require.Eventually(t, func() bool { return w.srv.ConnectedShards() == 0 }, quick, time.Millisecond)
	require.NoError(t, w.group.Close())
	require.ErrorIs(t, w.group.Open(w.ctx()), shards.ErrClosed)
}

// TestOpenEndsWhenGatewayLookupIsSilent: discordgo's gateway lookup has no
// context; a Discord that never answers it no longer holds Open past its
// context.
func TestOpenEndsWhenGatewayLookupIsSilent(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 2)
	require.NoError(t, w.srv.Inject(discordtest.Fault{Path: "/gateway", Delay: time.Hour, Times: 100}))
	ctx, cancel := context.WithCancel(context.Background())
	done := async(func() error { return w.group.Open(ctx) })
	require.Eventually(t, func() bool { return w.srv.Held() == 1 }, quick, time.Millisecond, "the lookup never arrived")
	cancel()
	err := within(t, done, "Open")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, shards.ErrClosed)
	require.Eventually(t, func() bool { return w.srv.Held() == 0 }, quick, time.Millisecond, "the lookup is still held")
	assert.Zero(t, w.srv.ConnectedShards())
}

// TestOpenEndsWhenGatewayLookupIsRateLimited: a minute's 429 on the lookup is
// waited out under Open's context, not in discordgo's sleep.
func TestOpenEndsWhenGatewayLookupIsRateLimited(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	require.NoError(t, w.srv.Inject(discordtest.Fault{Path: "/gateway", RetryAfter: time.Minute}))
	ctx, cancel := context.WithCancel(context.Background())
	done := async(func() error { return w.group.Open(ctx) })
	require.Eventually(t, func() bool { return w.clock.Timers() > 0 }, quick, time.Millisecond, "no wait began")
	cancel()
	require.ErrorIs(t, within(t, done, "Open"), context.Canceled)
}

// TestOpenRefusedQuotesNoToken: a refused gateway lookup whose body quotes
// the token (a proxy echoing the request) is Open's error without it.
func TestOpenRefusedQuotesNoToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	require.NoError(t, w.srv.Inject(discordtest.Fault{Path: "/gateway", Status: http.StatusUnauthorized,
		Body: `{"message": "401: Unauthorized {{authorization}}", "code": 0}`}))
	err := w.group.Open(w.ctx())
	require.ErrorContains(t, err, "Unauthorized")
	assert.NotContains(t, err.Error(), w.srv.Token())
}

// TestOpenAfterRateLimitedLookup: the same 429, waited out, then every shard
// connects.
func TestOpenAfterRateLimitedLookup(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 2)
	require.NoError(t, w.srv.Inject(discordtest.Fault{Path: "/gateway", RetryAfter: time.Minute}))
	done := async(func() error { return w.group.Open(w.ctx()) })
	require.Eventually(t, func() bool { return w.clock.Timers() > 0 }, quick, time.Millisecond, "no wait began")
	w.clock.Advance(time.Minute)
	require.NoError(t, within(t, done, "Open"))
	require.NoError(t, w.srv.WaitConnected(w.ctx(), 2))
}

// silentGateway is a Discord whose gateway accepts the websocket and then
// says nothing, not even HELLO: discordgo's Open waits with the session
// locked.
type silentGateway struct {
	srv      *httptest.Server
	accepted chan struct{}
	mu       sync.Mutex
	conns    []*websocket.Conn
}

func newSilentGateway(t *testing.T) *silentGateway {
	g := &silentGateway{accepted: make(chan struct{}, 16)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v9/gateway", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"url":"ws://`+r.Host+`/ws/"}`)
	})
	up := websocket.Upgrader{}
	mux.HandleFunc("GET /ws/", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if !assert.NoError(t, err) {
			return
		}
		g.mu.Lock()
		g.conns = append(g.conns, c)
		g.mu.Unlock()
		g.accepted <- struct{}{}
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	})
	g.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		g.mu.Lock()
		for _, c := range g.conns { // hijacked: not closed by httptest
			_ = c.Close()
		}
		g.mu.Unlock()
		g.srv.Close()
	})
	return g
}

// TestOpenEndsWhenGatewayIsSilent: a gateway that never says HELLO keeps
// discordgo's Open waiting, its session locked; the end of Open's context
// drops that connection, Open returns at once, and no shard dials again.
func TestOpenEndsWhenGatewayIsSilent(t *testing.T) {
	t.Parallel()
	gw := newSilentGateway(t)
	g, err := shards.New("token", 2, shards.WithAPIBase(gw.srv.URL+"/api/v9"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := async(func() error { return g.Open(ctx) })
	select {
	case <-gw.accepted:
	case <-time.After(quick):
		t.Fatal("the gateway was never dialled")
	}
	cancel()
	require.ErrorIs(t, within(t, done, "Open"), context.Canceled)
	require.NoError(t, within(t, async(g.Close), "Close"))
	assert.Never(t, func() bool { return len(gw.accepted) > 0 }, 100*time.Millisecond, 5*time.Millisecond,
		"a shard dialled after the stop")
}

// TestCloseCancelsPendingOpen: Close from another goroutine ends a pending
// Open and then closes.
func TestCloseCancelsPendingOpen(t *testing.T) {
	t.Parallel()
	gw := newSilentGateway(t)
	g, err := shards.New("token", 1, shards.WithAPIBase(gw.srv.URL+"/api/v9"))
	require.NoError(t, err)
	done := async(func() error { return g.Open(context.Background()) })
	select {
	case <-gw.accepted:
	case <-time.After(quick):
		t.Fatal("the gateway was never dialled")
	}
	require.NoError(t, within(t, async(g.Close), "Close"))
	require.ErrorIs(t, within(t, done, "Open"), shards.ErrClosed)
}

// TestMisuse: what cannot work fails at once, with an error that names the
// problem and never the token; a refused token, shard count or API base is a
// *topgg.ValidationError naming it.
func TestMisuse(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-token"
	for name, tc := range map[string]struct {
		token string
		n     int
		opts  []shards.Option
		field string // the *topgg.ValidationError's; "": another error
	}{
		"empty token":          {"", 1, nil, "Discord token"},
		"Bot prefix":           {"Bot " + secret, 1, nil, "Discord token"},
		"no shard":             {secret, 0, nil, "shard count"},
		"too many shards":      {secret, shards.MaxShards + 1, nil, "shard count"},
		"nil option":           {secret, 1, []shards.Option{nil}, ""},
		"nil logger":           {secret, 1, []shards.Option{shards.WithLogger(nil)}, ""},
		"zero body bound":      {secret, 1, []shards.Option{shards.WithMaxBodySize(0)}, ""},
		"relative base":        {secret, 1, []shards.Option{shards.WithAPIBase("/api/v9")}, "Discord API base"},
		"base with secrets":    {secret, 1, []shards.Option{shards.WithAPIBase("https://u:" + secret + "@example.com/api")}, "Discord API base"},
		"plain http elsewhere": {secret, 1, []shards.Option{shards.WithAPIBase("http://discord.example/api/v9")}, "Discord API base"},
	} {
		_, err := shards.New(tc.token, tc.n, tc.opts...)
		require.Error(t, err, name)
		assert.NotContains(t, err.Error(), secret, name)
		if tc.field != "" {
			requireInvalid(t, err, tc.field)
		}
	}
	g, err := shards.New(secret, 1)
	require.NoError(t, err)
	//lint:ignore SA1012 a nil context is the misuse under test
	require.Error(t, g.Open(nil))
	require.NoError(t, g.Close())
}

// TestForGuild: Discord's routing rule, and a bad ID is an error.
func TestForGuild(t *testing.T) {
	t.Parallel()
	g, err := shards.New("token", 4)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	for shard := range 4 {
		s, err := g.ForGuild(discordtest.GuildIDForShard(7, shard, 4))
		require.NoError(t, err)
		assert.Equal(t, shard, s.ShardID)
	}
	for _, bad := range []string{"", "abc", "-1", "+5", "99999999999999999999999"} {
		_, err := g.ForGuild(bad)
		assert.Error(t, err, bad)
	}
	assert.False(t, errors.Is(err, shards.ErrClosed))
}

// requireInvalid requires err to be a *topgg.ValidationError naming field.
func requireInvalid(t *testing.T, err error, field string) {
	t.Helper()
	ve, ok := errors.AsType[*topgg.ValidationError](err)
	require.True(t, ok, "want a *topgg.ValidationError for %s, got %v", field, err)
	require.Equal(t, field, ve.Field)
	require.NotEmpty(t, ve.Problem)
	require.NotEmpty(t, ve.Rule)
}

// TestZeroGroupPanics: a Group not made by New is invalid (DESIGN's
// zero-value policy): Open panics instead of opening nothing and returning nil.
func TestZeroGroupPanics(t *testing.T) {
	t.Parallel()
	for name, g := range map[string]*shards.Group{"zero": {}, "nil": nil} {
		assert.Panics(t, func() { _ = g.Open(context.Background()) }, name)
	}
}

// A Group printed whole shows no token under any verb: its sessions hold the
// token in clear, and fmt printed them field by field under %s, %q, %x...
func TestPrintedGroupHoldsNoToken(t *testing.T) {
	t.Parallel()
	const token = "dcSEKRIT.token.value"
	g, err := shards.New(token, 4, shards.WithShardIDs(1, 3))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	var b bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%t"} {
		fmt.Fprintf(&b, verb+"\n", g)
		fmt.Fprintf(&b, verb+"\n", []any{g})
	}
	slog.New(slog.NewTextHandler(&b, nil)).Info("group", "g", g)
	slog.New(slog.NewJSONHandler(&b, nil)).Info("group", "g", g)
	out := b.String()
	assert.NotContains(t, out, "SEKRIT")
	assert.NotContains(t, out, hex.EncodeToString([]byte("SEKRIT")))
	assert.NotContains(t, out, fmt.Sprintf("%X", "SEKRIT"))
	assert.Contains(t, fmt.Sprint(g), "shards: [1 3]")
}

// TestWithShardIDsOpensOnlyThoseShards: a process running shards 1 and 3 of
// 4 makes and opens only their sessions, each identifying with the bot's
// total of 4, and routes only their guilds.
func TestWithShardIDsOpensOnlyThoseShards(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 4, shards.WithShardIDs(3, 1))
	ss := w.group.Sessions()
	require.Len(t, ss, 2)
	for i, want := range []int{1, 3} {
		assert.Equal(t, want, ss[i].ShardID)
		assert.Equal(t, 4, ss[i].ShardCount)
		assert.Equal(t, &[2]int{want, 4}, ss[i].Identify.Shard)
	}
	ready := make(chan int, 4)
	for _, s := range ss {
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.Ready) { ready <- s.ShardID })
	}
	require.NoError(t, w.group.Open(w.ctx()))
	require.NoError(t, w.srv.WaitConnected(w.ctx(), 2))
	assert.ElementsMatch(t, []int{1, 3}, []int{<-ready, <-ready})
	assert.Equal(t, 2, w.srv.ConnectedShards())

	for shard := range 4 {
		s, err := w.group.ForGuild(discordtest.GuildIDForShard(5, shard, 4))
		if shard == 1 || shard == 3 {
			require.NoError(t, err)
			assert.Equal(t, shard, s.ShardID)
			continue
		}
		require.ErrorIs(t, err, shards.ErrNotHere)
	}
}

func TestWithShardIDsRefusesBadIDs(t *testing.T) {
	t.Parallel()
	for name, ids := range map[string][]int{"too big": {0, 4}, "negative": {-1}, "twice": {2, 1, 2}} {
		_, err := shards.New("token", 4, shards.WithShardIDs(ids...))
		assert.Error(t, err, name)
	}
	for _, ids := range [][]int{{0, 4}, {-1}} {
		_, err := shards.New("token", 4, shards.WithShardIDs(ids...))
		requireInvalid(t, err, "shard ids")
	}
}

// parseIDs decodes s as a SHARD_IDS variable.
func parseIDs(s string) (shards.IDs, error) {
	var ids shards.IDs
	err := ids.EnvDecode(s)
	return ids, err
}

// TestParseIDs: IDs and ranges in any order come back sorted, empty is nil
// (every shard), and each malformed list is refused (a huge range without
// allocating for it).
func TestParseIDs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]shards.IDs{
		"0-3": {0, 1, 2, 3}, "0,2,4": {0, 2, 4}, "4-5, 0-1": {0, 1, 4, 5}, "7": {7}, "3-3": {3}, "65535": {65535},
	} {
		got, err := parseIDs(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	got, err := parseIDs("")
	require.NoError(t, err)
	assert.Nil(t, got)
	for _, bad := range []string{" ", "0,,2", "-1", "01", "3-1", "0-3,2-4", "1,1", "0;2", "0-1000000000", "65536", "+1", "1-"} {
		_, err := parseIDs(bad)
		assert.Error(t, err, bad)
	}
	assert.Equal(t, "0-3,5,7-8", shards.IDs{0, 1, 2, 3, 5, 7, 8}.String())
	assert.Empty(t, shards.IDs(nil).String())
}

// TestIDsEnvDecode: go-envconfig decodes a SHARD_IDS variable into IDs, an
// unset one leaves nil (every shard), and a bad one fails naming the field.
func TestIDsEnvDecode(t *testing.T) {
	t.Parallel()
	type cfg struct {
		ShardIDs shards.IDs `env:"SHARD_IDS"`
	}
	var c cfg
	require.NoError(t, envconfig.ProcessWith(t.Context(), &envconfig.Config{Target: &c,
		Lookuper: envconfig.MapLookuper(map[string]string{"SHARD_IDS": "2-3,0"})}))
	assert.Equal(t, shards.IDs{0, 2, 3}, c.ShardIDs)

	c = cfg{}
	require.NoError(t, envconfig.ProcessWith(t.Context(), &envconfig.Config{Target: &c, Lookuper: envconfig.MapLookuper(nil)}))
	assert.Nil(t, c.ShardIDs)

	err := envconfig.ProcessWith(t.Context(), &envconfig.Config{Target: &c,
		Lookuper: envconfig.MapLookuper(map[string]string{"SHARD_IDS": "3-1"})})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ShardIDs")
	assert.Contains(t, err.Error(), "ends before it starts")
}

// TestIDsOption: parsed IDs make a Group of those shards only; nil IDs keep
// every shard.
func TestIDsOption(t *testing.T) {
	t.Parallel()
	ids, err := parseIDs("1,3")
	require.NoError(t, err)
	g, err := shards.New("token", 4, shards.WithShardIDs(ids...))
	require.NoError(t, err)
	assert.Equal(t, "shards.Group{shard count: 4, shards: [1 3]}", fmt.Sprint(g))
	g, err = shards.New("token", 2, shards.WithShardIDs(shards.IDs(nil)...))
	require.NoError(t, err)
	assert.Equal(t, "shards.Group{shard count: 2, shards: [0 1]}", fmt.Sprint(g))
	_, err = shards.New("token", 2, shards.WithShardIDs(ids...))
	requireInvalid(t, err, "shard ids") // shard 3 of 2
}

// events records what happened, in order, from any goroutine.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) { e.mu.Lock(); defer e.mu.Unlock(); e.log = append(e.log, s) }
func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// TestServeStopsTheJobBeforeTheShards: Serve opens every shard against the
// fake Discord while the job runs; on the stop, the job's context ends while
// the gateway connections are still up, and they close only after it returned.
func TestServeStopsTheJobBeforeTheShards(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 2)
	var ev events
	for _, s := range w.group.Sessions() {
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.Ready) { ev.add("ready") })
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.Disconnect) { ev.add("disconnected") })
	}
	ctx, stop := context.WithCancel(w.ctx())
	errJob := errors.New("job's error")
	served := async(func() error {
		return w.group.Serve(ctx, func(ctx context.Context) error {
			<-ctx.Done()
			ev.add("job stopped")
			return errJob
		}, shards.Shutdown{})
	})
	require.Eventually(t, func() bool { return len(ev.get()) == 2 }, quick, 10*time.Millisecond, "both shards' READY")
	stop()
	err := within(t, served, "Serve")
	require.ErrorIs(t, err, errJob)
	// discordgo runs each handler in its own goroutine: a Disconnect fired by
	// Close may be handled just after Serve returned.
	// A heartbeat that fails on the closing connection makes discordgo close,
	// and fire Disconnect, once more.
	require.Eventually(t, func() bool { return len(ev.get()) >= 5 }, quick, time.Millisecond, "both shards' Disconnect: %v", ev.get())
	got := ev.get()
	assert.Equal(t, []string{"ready", "ready", "job stopped"}, got[:3])
	assert.Equal(t, slices.Repeat([]string{"disconnected"}, len(got)-3), got[3:])
	require.NoError(t, w.group.Close(), "Close after Serve")
}

// TestServeJobFailure: a job failing while the shards run stops Serve, which
// returns its error and closes the shards; the misuses are errors.
func TestServeJobFailure(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	errJob := errors.New("state directory in use")
	err := within(t, async(func() error {
		return w.group.Serve(w.ctx(), func(context.Context) error { return errJob }, shards.Shutdown{})
	}), "Serve")
	require.ErrorIs(t, err, errJob)
	require.ErrorIs(t, w.group.Open(w.ctx()), shards.ErrClosed)

	assert.Error(t, w.group.Serve(w.ctx(), nil, shards.Shutdown{}))
	assert.Error(t, w.group.Serve(w.ctx(), func(context.Context) error { return nil }, shards.Shutdown{Budget: -1}))
	var zero shards.Group
	assert.Panics(t, func() { _ = zero.Serve(w.ctx(), func(context.Context) error { return nil }, shards.Shutdown{}) })
}

// TestApplication reads the fake Discord's application: its ID is the bot's.
func TestApplication(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	app, err := w.group.Application(w.ctx())
	require.NoError(t, err)
	assert.Equal(t, w.srv.BotUserID(), app.ID)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = w.group.Application(ctx)
	require.ErrorIs(t, err, context.Canceled)

	// A refusal whose body quotes the token (a proxy echoing the request) keeps Discord's words, not the token.
	require.NoError(t, w.srv.Inject(discordtest.Fault{Method: http.MethodGet, Path: "/oauth2/applications/@me", Status: http.StatusUnauthorized,
		Body: `{"message": "401: Unauthorized {{authorization}}", "code": 0}`}))
	_, err = w.group.Application(w.ctx())
	require.ErrorContains(t, err, "Unauthorized")
	assert.NotContains(t, err.Error(), w.srv.Token())
}

// TestStopInOrderJobsFirst: the job stops before the shards close, and both
// errors come back.
func TestStopInOrderJobsFirst(t *testing.T) {
	t.Parallel()
	var st events
	errJobs, errShards := errors.New("jobs"), errors.New("shards")
	err := shards.StopInOrder(
		func() error { st.add("jobs"); return errJobs },
		func() error { st.add("shards"); return errShards },
		time.Minute, time.Minute)
	assert.ErrorIs(t, err, errJobs)
	assert.ErrorIs(t, err, errShards)
	assert.Equal(t, []string{"jobs", "shards"}, st.get())
}

// TestStopInOrderSlowJobs: a job that takes longer than jobsFirst does not
// keep the shards open; stopInOrder still waits for it, within the budget.
func TestStopInOrderSlowJobs(t *testing.T) {
	t.Parallel()
	var st events
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- shards.StopInOrder(
			func() error { <-release; st.add("jobs stopped"); return nil },
			func() error { st.add("shards closed"); return nil },
			time.Minute, 50*time.Millisecond)
	}()
	require.Eventually(t, func() bool { return slices.Contains(st.get(), "shards closed") }, 10*time.Second, time.Millisecond,
		"the shards waited for the jobs")
	select {
	case err := <-done:
		t.Fatalf("stopInOrder returned before the jobs stopped: %v", err)
	default:
	}
	close(release)
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)
	assert.Equal(t, []string{"shards closed", "jobs stopped"}, st.get())
}

// TestStopInOrderBudget: a job that never stops makes stopInOrder return an
// error at the budget, with the shards closed all the same; and shards that
// never close, likewise.
func TestStopInOrderBudget(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // the stuck step's goroutine ends with the test
	var st events
	err := shards.StopInOrder(
		func() error { <-release; return nil },
		func() error { st.add("shards closed"); return nil },
		300*time.Millisecond, 50*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the jobs did not stop")
	assert.Equal(t, []string{"shards closed"}, st.get())

	err = shards.StopInOrder(func() error { return nil }, func() error { <-release; return nil }, 300*time.Millisecond, 50*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the shards did not close")
}
