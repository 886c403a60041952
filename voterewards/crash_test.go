//go:build unix

package voterewards_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/boltstate"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
	"github.com/dblkit/go-topgg/voterewards"
)

const crashConcurrency = 4

// TestCrashChild is the poller process that TestCrashSafety kills. It runs
// only when re-executed with crashChildEnv set: it polls the parent's fake
// and appends "round key" to a log, with fsync, for every vote it handles.
func TestCrashChild(t *testing.T) {
	round := os.Getenv(crashChildEnv)
	if round == "" {
		t.Skip("run by TestCrashSafety")
	}
	store, err := boltstate.Open(os.Getenv(crashDirEnv))
	require.NoError(t, err)
	// A kill can tear the killed child's last line (a write that crosses a
	// page of the file stops between pages): cut it, or this child's first
	// line would be glued to it. Its vote was not handled: it comes again.
	if b, err := os.ReadFile(os.Getenv(crashLogEnv)); err == nil {
		require.NoError(t, os.Truncate(os.Getenv(crashLogEnv), int64(bytes.LastIndexByte(b, '\n')+1)))
	}
	log, err := os.OpenFile(os.Getenv(crashLogEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	require.NoError(t, err)
	client, err := topgg.New(os.Getenv(crashTokenEnv), topgg.WithBaseURL(os.Getenv(crashURLEnv)))
	require.NoError(t, err)
	handle := func(_ context.Context, v voterewards.Vote) error {
		// Handlers that take a while make the kills land mid-delivery.
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		if _, err := log.WriteString(round + " " + v.Key() + "\n"); err != nil {
			return err
		}
		return log.Sync()
	}
	p, err := voterewards.New(client, voterewards.Config{
		OnReward: handle, Store: store, Interval: 10 * time.Millisecond,
		Concurrency: crashConcurrency, RetryDelay: time.Millisecond,
	})
	require.NoError(t, err)
	// Runs until SIGKILL.
	require.NoError(t, p.Run(context.Background()))
}

// crashChild starts the child of one round.
func crashChild(t *testing.T, srv *topggtest.Server, dir, logPath string, round int) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(),
		crashChildEnv+"="+strconv.Itoa(round),
		crashURLEnv+"="+srv.URL,
		crashTokenEnv+"="+srv.Token(),
		crashDirEnv+"="+dir,
		crashLogEnv+"="+logPath,
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	return cmd, &out
}

// crashLog reads the complete lines of the handler log: the round that
// handled each vote, per key. A torn last line is a handler that was killed
// before it finished, and is ignored.
func crashLog(t *testing.T, path string) (byKey map[string][]int, byRound map[int][]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string][]int{}, map[int][]string{}
	}
	require.NoError(t, err)
	byKey, byRound = map[string][]int{}, map[int][]string{}
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	for line := range strings.Lines(string(b)) {
		r, key, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		require.True(t, ok, "log line %q", line)
		n, err := strconv.Atoi(r)
		require.NoError(t, err)
		byKey[key] = append(byKey[key], n)
		byRound[n] = append(byRound[n], key)
	}
	return byKey, byRound
}

// pendingKeys opens the store (the child is dead) and returns the keys of the
// votes still waiting for delivery.
func pendingKeys(t *testing.T, dir string) map[string]bool {
	t.Helper()
	store, err := boltstate.Open(dir)
	require.NoError(t, err)
	defer store.Close()
	snap, err := store.Load(context.Background())
	require.NoError(t, err)
	out := map[string]bool{}
	for _, v := range snap.Pending {
		out[v.Key()] = true
	}
	return out
}

// requireLedgerExact checks the ledger the killed children left: each vote
// of the fake (one per voter) counted exactly once, with its weight, though
// deliveries were repeated.
func requireLedgerExact(t *testing.T, dir string, srv *topggtest.Server) {
	t.Helper()
	store, err := boltstate.Open(dir)
	require.NoError(t, err)
	defer store.Close()
	votes, total := 0, 0
	for _, v := range srv.Votes() {
		st, err := store.Stats(context.Background(), v.PlatformID)
		require.NoError(t, err)
		require.Equal(t, 1, st.Votes, "voter %s", v.PlatformID)
		require.Equal(t, v.Weight, st.Total, "voter %s", v.PlatformID)
		votes, total = votes+1, total+v.Weight
	}
	top, err := store.Leaderboard(context.Background(), time.Time{}, 1)
	require.NoError(t, err)
	require.Len(t, top, 1)
	assert.Equal(t, 2, top[0].Total, "a weekend vote leads")
	t.Logf("ledger after the kills: %d votes, total %d, each counted once", votes, total)
}

// TestCrashSafety kills a child process running the poller mid-delivery,
// round after round, and checks after each restart that no vote is skipped
// and that duplicates stay within the concurrency bound.
//
// gocyclo 16: one kill-and-restart loop told in order, with the checks of
// each round where it ends.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes for several seconds")
	}
	t.Parallel()
	srv := newServer(t, topggtest.WithPageSize(40))
	dir := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "handled.log")

	// Vote times only grow, so a cursor never skips a vote as too old.
	var mu sync.Mutex
	next, base := 0, time.Now().Add(-6*time.Hour)
	addVotes := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		for range n {
			u := next // one user's votes 1 ms apart would be one vote
			srv.AddVote(topggtest.Vote{UserID: userID(u), PlatformID: platformID(u), Weight: 1 + next%2,
				CreatedAt: base.Add(time.Duration(next) * time.Millisecond)})
			next++
		}
	}
	addVotes(150)

	const rounds = 24
	inFlightAtKill := make([]int, rounds)
	for round := range rounds {
		cmd, out := crashChild(t, srv, dir, logPath, round)
		// Kill at a random point once the round delivers: every round has
		// new votes, so the kill lands while they are being handled and
		// recorded, or just after.
		started := assert.Eventually(t, func() bool {
			_, byRound := crashLog(t, logPath)
			return len(byRound[round]) > 0
		}, 20*time.Second, time.Millisecond, "round %d delivered nothing", round)
		if started {
			time.Sleep(time.Duration(rand.IntN(15_000)) * time.Microsecond)
		}
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "child was not killed but exited:\n%s", out)

		// Votes this round handled but did not record: the duplicates the
		// kill may cause. At most one per worker.
		_, byRound := crashLog(t, logPath)
		pending := pendingKeys(t, dir)
		for _, k := range byRound[round] {
			if pending[k] {
				inFlightAtKill[round]++
			}
		}
		assert.LessOrEqual(t, inFlightAtKill[round], crashConcurrency, "round %d", round)

		addVotes(20 + rand.IntN(40))
		if round%6 == 5 {
			srv.ExpireCursors()
		}
	}

	// A last run that is not killed until every vote is handled.
	cmd, out := crashChild(t, srv, dir, logPath, rounds)
	want := keysOf(srv)
	ok := assert.Eventually(t, func() bool {
		byKey, _ := crashLog(t, logPath)
		for _, k := range want {
			if len(byKey[k]) == 0 {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.True(t, ok, "not every vote was handled; child output:\n%s", out)

	byKey, _ := crashLog(t, logPath)
	duplicates, causedByKills := 0, 0
	for _, k := range want {
		require.NotEmpty(t, byKey[k], "vote %s skipped", k)
		duplicates += len(byKey[k]) - 1
	}
	require.Len(t, byKey, len(want), "a handled vote the fake never had")
	for _, n := range inFlightAtKill {
		causedByKills += n
	}
	// Every duplicate comes from a vote that a kill caught handled but not
	// recorded; no vote is delivered twice otherwise.
	assert.LessOrEqual(t, duplicates, causedByKills)
	requireLedgerExact(t, dir, srv)
	maxRound := 0
	for _, n := range inFlightAtKill {
		maxRound = max(maxRound, n)
	}
	caught := 0
	for _, n := range inFlightAtKill {
		if n > 0 {
			caught++
		}
	}
	t.Logf("crash test: %d rounds (SIGKILL after the round's first delivery), %d caught deliveries in flight; "+
		"%d votes, %d handled in all, %d duplicates (at most %d in one kill, limit %d)",
		rounds, caught, len(want), len(want)+duplicates, duplicates, maxRound, crashConcurrency)
}
