package voterewards_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

// Environment of the crash child: set by TestCrashSafety only.
const (
	crashChildEnv = "VOTEREWARDS_CRASH_CHILD" // the round number
	crashURLEnv   = "VOTEREWARDS_CRASH_URL"
	crashTokenEnv = "VOTEREWARDS_CRASH_TOKEN"
	crashDirEnv   = "VOTEREWARDS_CRASH_DIR"
	crashLogEnv   = "VOTEREWARDS_CRASH_LOG"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		// The crash child is killed, never checked for leaks.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}

// userID and platformID make distinct snowflake-shaped ids for user n.
func userID(n int) string     { return fmt.Sprintf("7%017d", n) }
func platformID(n int) string { return fmt.Sprintf("3%017d", n) }

// keys returns the votes' keys, in order.
func keys(votes []voterewards.Vote) []string {
	out := []string{}
	for _, v := range votes {
		out = append(out, v.Key())
	}
	return out
}

// newServer starts a fake service closed at cleanup.
func newServer(t testing.TB, opts ...topggtest.Option) *topggtest.Server {
	t.Helper()
	srv, err := topggtest.NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// newClient returns a real client talking HTTP to srv.
func newClient(t testing.TB, srv *topggtest.Server, opts ...topgg.Option) *topgg.Client {
	t.Helper()
	opts = append([]topgg.Option{topgg.WithBaseURL(srv.URL), topgg.WithHTTPClient(srv.Client())}, opts...)
	c, err := topgg.New(srv.Token(), opts...)
	require.NoError(t, err)
	return c
}

// startPoller runs a poller until cleanup (before the server closes).
func startPoller(t testing.TB, src voterewards.History, cfg voterewards.Config) *voterewards.Poller {
	t.Helper()
	p, _ := runPoller(t, src, cfg)
	return p
}

// runPoller makes a poller and runs it in a goroutine; stop cancels Run and
// returns its result once it returned (bounded). Calling stop again returns
// the same result.
func runPoller(t testing.TB, src voterewards.History, cfg voterewards.Config) (*voterewards.Poller, func() error) {
	t.Helper()
	if cfg.Interval == 0 {
		cfg.Interval = 20 * time.Millisecond
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = time.Millisecond
	}
	p, err := voterewards.New(src, cfg)
	require.NoError(t, err)
	stop := goRun(t, p.Run)
	t.Cleanup(func() { _ = stop() })
	return p, stop
}

// goRun runs job in a goroutine and returns its stop function.
func goRun(t testing.TB, job func(context.Context) error) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- job(ctx) }()
	var once sync.Once
	var result error
	return func() error {
		once.Do(func() {
			cancel()
			select {
			case result = <-done:
			case <-time.After(10 * time.Second):
				t.Errorf("Run did not return within 10 s of its context's end")
			}
		})
		return result
	}
}

// awaitAdvancing moves clk on by step until done yields Run's error, and
// returns it: Run's grace timers are on the fake clock and made as its loops
// stop, so the test moves the clock until Run returns (bounded by 5 s).
func awaitAdvancing(t *testing.T, clk *clock.Fake, step time.Duration, done <-chan error, msg string) error {
	t.Helper()
	var runErr error
	require.Eventually(t, func() bool {
		select {
		case runErr = <-done:
			return true
		default:
			clk.Advance(step)
			return false
		}
	}, 5*time.Second, time.Millisecond, msg)
	return runErr
}

// recorder counts handler calls by vote key; safe for concurrent use.
type recorder struct {
	testkit.Counter
	mu    sync.Mutex
	votes map[string]voterewards.Vote
	order []string
}

func newRecorder() *recorder { return &recorder{votes: map[string]voterewards.Vote{}} }

func (r *recorder) handle(_ context.Context, v voterewards.Vote) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Add(v.Key())
	r.votes[v.Key()] = v
	r.order = append(r.order, v.Key())
	return nil
}

func (r *recorder) count() int               { return r.Distinct() }
func (r *recorder) total() int               { return r.Total() }
func (r *recorder) snapshot() map[string]int { return r.Snapshot() }

// keyOf is the dedup key the poller should give a fake's vote.
func keyOf(v topggtest.Vote) string {
	return voterewards.Vote{Vote: v}.Key()
}

// keysOf returns the dedup keys of every vote the fake holds.
func keysOf(srv *topggtest.Server) []string {
	var out []string
	for _, v := range srv.Votes() {
		out = append(out, keyOf(v))
	}
	return out
}

// requireExactlyOnce waits until every vote of srv was handled, then checks
// that none was handled twice and no unknown vote was handled. A duplicate
// would come from a later poll that reads the votes again, so it counts only
// after three more vote requests: the page of the second one, at least, was
// read and queued by then, and a whole poll ran after the one that completed
// the set.
func requireExactlyOnce(t *testing.T, srv *topggtest.Server, rec *recorder) {
	t.Helper()
	want := keysOf(srv)
	require.Eventually(t, func() bool { return rec.count() >= len(want) }, 10*time.Second, 5*time.Millisecond,
		"not every vote was handled")
	n := len(votesRequests(srv))
	require.Eventually(t, func() bool { return len(votesRequests(srv)) >= n+3 }, 10*time.Second, time.Millisecond,
		"polling stopped")
	got := rec.snapshot()
	for _, k := range want {
		require.Equal(t, 1, got[k], "vote %s handled %d times", k, got[k])
	}
	require.Len(t, got, len(want))
}

// eventLog records reward and expiry calls in the order they happen, as
// "reward <key>" and "expire <key>"; after, if set, runs after each record.
type eventLog struct {
	mu     sync.Mutex
	events []string
	after  func(kind string, v voterewards.Vote)
}

func (l *eventLog) handler(kind string) voterewards.Handler {
	return func(_ context.Context, v voterewards.Vote) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.events = append(l.events, kind+" "+v.Key())
		if l.after != nil {
			l.after(kind, v)
		}
		return nil
	}
}

func (l *eventLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// prunedVote starts a poller on a server holding an expired vote of user 1
// (13 h old, at old) and an active one of user 2, and returns once both were
// rewarded and the expired one is pruned from the dedup set.
func prunedVote(t *testing.T) (*topggtest.Server, voterewards.State, *recorder, *voterewards.Poller, time.Time) {
	t.Helper()
	srv := newServer(t)
	now := time.Now().UTC().Truncate(time.Second)
	old := now.Add(-13 * time.Hour)
	srv.AddVote(topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), Weight: 1, CreatedAt: old, ExpiresAt: old.Add(voterewards.VoteLifetime)})
	srv.AddVote(topggtest.Vote{UserID: userID(2), PlatformID: platformID(2), Weight: 1, CreatedAt: now.Add(-10 * time.Minute), ExpiresAt: now.Add(-10*time.Minute + voterewards.VoteLifetime)})

	rec := newRecorder()
	store := voterewards.NewMemoryStore()
	p := startPoller(t, newClient(t, srv), voterewards.Config{Store: store, OnReward: rec.handle, Lookback: 24 * time.Hour})
	require.Eventually(t, func() bool { return rec.total() == 2 }, 5*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { // pruned: the dedup set no longer holds the old vote
		snap, err := store.Load(context.Background())
		return err == nil && len(snap.Seen) == 1
	}, 5*time.Second, 5*time.Millisecond)
	return srv, store, rec, p, old
}

// lateAndNextVote adds to srv's history a user's vote that expired long ago
// and the same user's next vote, an hour old.
func lateAndNextVote(srv *topggtest.Server) (first, second topggtest.Vote) {
	now := time.Now()
	first = topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(-20 * time.Hour)}
	second = topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: now.Add(-time.Hour)}
	srv.AddVote(first, second)
	return first, second
}

// requireExpiryBeforeNextReward waits up to within for three events on log
// and requires them in order: first's reward, its expiry, second's reward.
func requireExpiryBeforeNextReward(t *testing.T, log *eventLog, first, second topggtest.Vote, within time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return len(log.snapshot()) == 3 }, within, 5*time.Millisecond)
	assert.Equal(t, []string{"reward " + keyOf(first), "expire " + keyOf(first), "reward " + keyOf(second)}, log.snapshot())
}

// serverWithVote starts a fake Top.gg whose history holds one vote, an hour
// old, and returns it with that vote.
func serverWithVote(t *testing.T) (*topggtest.Server, topggtest.Vote) {
	t.Helper()
	srv := newServer(t)
	v := topggtest.Vote{UserID: userID(1), PlatformID: platformID(1), CreatedAt: time.Now().Add(-time.Hour)}
	srv.AddVote(v)
	return srv, v
}
