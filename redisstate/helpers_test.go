package redisstate

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/autopost"
	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/fleet"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// newClient returns a client of addr with its own pool (a separate process).
func newClient(t testing.TB, addr string) *redis.Client { return redistest.ClientOf(t, addr) }

// runLease runs bot's lease on rdb until the test ends; its terms hold
// leadership until then.
func runLease(t testing.TB, rdb redis.UniversalClient, bot string) *fleet.Lease {
	t.Helper()
	f, err := fleet.New(rdb, fleet.Config{Bot: bot, ShardCount: 1, LeaseTTL: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	lease := f.Lease()
	testkit.Start(t, func(ctx context.Context) error {
		return lease.Run(ctx, func(ctx context.Context, _ int64) error { <-ctx.Done(); return nil })
	})
	return lease
}

// startProcess is one process of bot on addr: its own client, its lease
// (running until the test ends) and its state, fenced by the lease's token
// as the plugin fences it.
func startProcess(t testing.TB, addr, bot string) (*State, *fleet.Lease) {
	t.Helper()
	rdb := newClient(t, addr)
	lease := runLease(t, rdb, bot)
	s, err := New(rdb, bot)
	require.NoError(t, err)
	require.NoError(t, s.UseFence(func() int64 { return lease.State().Token }))
	return s, lease
}

// leadingState returns the state of a process of bot on srv that leads
// until the test ends (its leader writes pass the fence).
func leadingState(t testing.TB, srv *redistest.Server, bot string) (*State, *fleet.Lease) {
	t.Helper()
	s, lease := startProcess(t, srv.Addr(), bot)
	require.Eventually(t, func() bool { return lease.State().Leader }, 10*time.Second, time.Millisecond)
	return s, lease
}

// roundTrips counts what a client sends to Redis (the kit's hook).
type roundTrips = redistest.RoundTrips

func TestMain(m *testing.M) { redistest.Main(m, "redisstate") }

// haPollStep is how often the HA tests poll what they wait on.
const haPollStep = 100 * time.Millisecond

// haWorld is a bot run as several in-process fleet processes, each with its
// own Redis client made from the URL (its own connections and lease
// holder, as a separate process has: the promises under test live in Redis,
// so an address space of its own would change nothing but the speed),
// against the fake Top.gg (HTTP) and the fake Discord (real discordgo
// sessions over websockets).
type haWorld struct {
	t          *testing.T
	url        string
	shardCount int
	dc         *discordtest.Server
	tg         *topggtest.Server
	client     *topgg.Client

	mu      sync.Mutex
	terms   []haTerm           // in the order they began
	rewards map[string][]int64 // voter -> the token of each reward call (one vote per voter)
}

// haTerm is one term: who led, with which token.
type haTerm struct {
	proc  int
	token int64
}

// haProcess is one process of the fleet: its lease and counts, and its state.
type haProcess struct {
	id       int
	f        *fleet.Fleet
	state    *State
	counter  *autopost.Counter
	sessions []*discordgo.Session
	stop     context.CancelFunc
	done     chan struct{}
}

// newHAWorld starts the fakes for a bot of shardCount shards with
// guildsPerShard guilds each.
func newHAWorld(t *testing.T, url string, shardCount, guildsPerShard int) *haWorld {
	t.Helper()
	perShard := make([]int, shardCount)
	for i := range perShard {
		perShard[i] = guildsPerShard
	}
	dc := testkit.Discord(t, perShard)
	tg, err := topggtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	client, err := tg.NewClient()
	require.NoError(t, err)
	return &haWorld{t: t, url: url, shardCount: shardCount, dc: dc, tg: tg, client: client,
		rewards: map[string][]int64{}}
}

// start runs one process for shards: its reporter, and its lease, whose
// every term runs the leader's jobs (the Poster of the fleet total, the vote
// Poller on the process's state, fenced by the lease) until the term ends.
func (w *haWorld) start(id int, shards ...int) *haProcess {
	t := w.t
	t.Helper()
	rdb, err := fleet.NewUniversalClient(w.url)
	require.NoError(t, err)
	f, err := fleet.New(rdb, fleet.Config{Bot: redistest.HABot, ShardCount: w.shardCount, LeaseTTL: redistest.HATTL,
		ReportEvery: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	state, err := New(rdb, redistest.HABot)
	require.NoError(t, err)
	require.NoError(t, state.UseFence(func() int64 { return f.Lease().State().Token }))
	p := &haProcess{id: id, f: f, state: state, counter: autopost.NewCounter(w.shardCount), done: make(chan struct{})}
	for _, s := range shards {
		sess, err := w.dc.NewSession(s, w.shardCount)
		require.NoError(t, err)
		p.sessions = append(p.sessions, sess)
	}
	_, err = p.counter.Attach(p.sessions...)
	require.NoError(t, err)
	total, report, err := f.Counts(p.counter)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, report(ctx)) })
	wg.Go(func() {
		assert.NoError(t, f.Lease().Run(ctx, func(lctx context.Context, token int64) error {
			return w.lead(lctx, p, total, token)
		}))
	})
	go func() { wg.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		select {
		case <-p.done:
		case <-time.After(redistest.HAWait):
			t.Error("a fleet process did not stop")
		}
		var cw sync.WaitGroup
		for _, s := range p.sessions {
			cw.Go(func() { _ = s.Close() })
		}
		cw.Wait()
		assert.NoError(t, rdb.Close())
	})
	for _, s := range p.sessions {
		require.NoError(t, s.Open())
	}
	return p
}

// lead is one term of p: the Poster and the Poller until the term ends.
func (w *haWorld) lead(ctx context.Context, p *haProcess, total autopost.Source, token int64) error {
	w.mu.Lock()
	w.terms = append(w.terms, haTerm{proc: p.id, token: token})
	w.mu.Unlock()
	poster, err := autopost.New(w.client, autopost.Config{Source: total, Interval: 300 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	poller, err := voterewards.New(w.client, voterewards.Config{Store: p.state, Interval: haPollStep,
		RetryDelay: 50 * time.Millisecond, GracePeriod: time.Second, Logger: slog.New(slog.DiscardHandler),
		OnReward: func(_ context.Context, v voterewards.Vote) error {
			w.mu.Lock()
			w.rewards[v.PlatformID] = append(w.rewards[v.PlatformID], token)
			w.mu.Unlock()
			return nil
		}})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = poster.Run(ctx) })
	wg.Go(func() { _ = poller.Run(ctx) })
	wg.Wait()
	return nil
}

// tokens returns the terms' tokens in the order the terms began.
func (w *haWorld) tokens() []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]int64, len(w.terms))
	for i, tm := range w.terms {
		out[i] = tm.token
	}
	return out
}

// rewardCalls returns how many times each vote key was rewarded.
func (w *haWorld) rewardCalls() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, ts := range w.rewards {
		out[k] = len(ts)
	}
	return out
}

// rewardTokens returns the tokens of the terms that rewarded voter key.
func (w *haWorld) rewardTokens(key string) []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.rewards[key])
}

// waitRewarded waits until each of keys was rewarded at least once.
func (w *haWorld) waitRewarded(keys []string, msg string) {
	w.t.Helper()
	require.Eventually(w.t, func() bool {
		calls := w.rewardCalls()
		for _, k := range keys {
			if calls[k] == 0 {
				return false
			}
		}
		return true
	}, redistest.HAWait, redistest.HATick, msg)
}

// addVotes adds n votes by new voters (from first on) to the fake Top.gg's
// history and returns the voters (one vote each).
func (w *haWorld) addVotes(first, n int) []string {
	now := time.Now().UTC()
	var keys []string
	for i := first; i < first+n; i++ {
		created := now.Add(-time.Minute).Add(time.Duration(i) * time.Millisecond)
		tv := topggtest.Vote{UserID: fmt.Sprintf("8%017d", i), PlatformID: fmt.Sprintf("3%017d", i), Weight: 1,
			CreatedAt: created, ExpiresAt: created.Add(voterewards.VoteLifetime)}
		w.tg.AddVote(tv)
		keys = append(keys, tv.PlatformID)
	}
	return keys
}

// postedTotals returns the server counts of every metrics post so far.
func (w *haWorld) postedTotals() []int {
	var out []int
	for _, m := range w.tg.Metrics() {
		out = append(out, m.Metrics["server_count"])
	}
	return out
}

// leaders returns the processes that say they lead now.
func haLeaders(ps ...*haProcess) []*haProcess {
	var out []*haProcess
	for _, p := range ps {
		if p.f.Lease().State().Leader {
			out = append(out, p)
		}
	}
	return out
}

// newLeader starts a Redis server for the test and a State of bot on it
// that leads.
func newLeader(t *testing.T, bot string) (*redistest.Server, *State) {
	t.Helper()
	srv := redistest.Start(t)
	s, _ := leadingState(t, srv, bot)
	return srv, s
}
