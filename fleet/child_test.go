package fleet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/fence"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
)

// childEnv makes the test binary run childMain instead of the tests; the
// Redis address and bot come in childAddrEnv and childBotEnv.
const (
	childEnv     = "FLEET_TEST_CHILD"
	childAddrEnv = "FLEET_TEST_REDIS"
	childBotEnv  = "FLEET_TEST_BOT"
)

// fencedAppend appends ARGV[1] to the list KEYS[1] if the caller still leads.
var fencedAppend = fence.NewScript(`return redis.call('RPUSH', KEYS[1], ARGV[1])`)

// childMain is a leader process for the paused-leader test: it campaigns,
// and while it leads appends "child:<token>:<n>" to the shared list through
// the fence every 10 ms. When its leadership ends it tries one more fenced
// append (a straggling write, as a real job might make), prints the outcome
// ("after-loss fenced" or "after-loss wrote"), and exits.
func childMain(role string) int {
	if role != "paused-leader" {
		fmt.Fprintln(os.Stderr, "unknown child role", role)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(childAddrEnv), ContextTimeoutEnabled: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}}) // as fleet.NewUniversalClient does
	defer rdb.Close()
	bot := os.Getenv(childBotEnv)
	lease, err := newLease(rdb, bot, shortLease)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	list := Key(bot, "writes")
	err = lease.Run(ctx, func(lctx context.Context, token int64) error {
		defer cancel() // one term is the whole life of this process
		f := lease.Fence(token)
		fmt.Println("leader", token)
		for n := 0; lctx.Err() == nil; n++ {
			_, _ = fencedAppend.Run(context.Background(), rdb, f, []string{list}, fmt.Sprintf("child:%d:%d", token, n))
			select {
			case <-lctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
		_, err := fencedAppend.Run(context.Background(), rdb, f, []string{list}, fmt.Sprintf("child:%d:late", token))
		switch {
		case errors.Is(err, ErrFenced):
			fmt.Println("after-loss fenced")
		case err == nil:
			fmt.Println("after-loss wrote")
		default:
			fmt.Println("after-loss error", err)
		}
		return nil
	})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	return 0
}

func TestPausedLeaderWritesNothingAfterItResumes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const bot = "paused"
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=paused-leader", childAddrEnv+"="+srv.Addr(), childBotEnv+"="+bot)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	exited := make(chan struct{}) // closed once the child is reaped; then waitErr is set
	var waitErr error
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		httpx.Within("the killed child process to exit", func() {
			for range lines { // drain, so that Wait can finish
			}
			<-exited
		})
	})

	childToken := expectLine(t, lines, "leader ")
	ctx := context.Background()
	obs := srv.Client(t)
	list := Key(bot, "writes")
	require.Eventually(t, func() bool { return obs.LLen(ctx, list).Val() > 3 }, 5*time.Second, 5*time.Millisecond,
		"the child leader never wrote through the fence")

	// Pause the leader past its TTL; another process must win and write.
	require.NoError(t, cmd.Process.Signal(syscall.SIGSTOP))
	parent := startContender(t, srv.Addr(), bot, shortLease, func(lctx context.Context, tok int64) error {
		_, err := fencedAppend.Run(lctx, obs, Fence{}, []string{list}, "never") // the zero fence writes nothing
		assert.ErrorIs(t, err, ErrNoFence)
		return blockUntilDone(lctx, tok)
	})
	require.Eventually(t, func() bool { return parent.lease.State().Leader }, 3*shortLease.TTL, 5*time.Millisecond,
		"no takeover while the leader was stopped")
	parentToken := parent.lease.State().Token
	_, err = fencedAppend.Run(ctx, obs, parent.lease.Fence(parentToken), []string{list}, "parent")
	require.NoError(t, err)

	require.NoError(t, cmd.Process.Signal(syscall.SIGCONT))
	assert.Equal(t, "fenced", expectLine(t, lines, "after-loss "), "the resumed leader's late write was not refused")
	select {
	case <-exited:
		require.NoError(t, waitErr, "the child failed")
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed child did not exit")
	}

	writes, err := obs.LRange(ctx, list, 0, -1).Result()
	require.NoError(t, err)
	i := indexOf(writes, "parent")
	require.GreaterOrEqual(t, i, 0)
	assert.Empty(t, writes[i+1:], "writes landed after the new leader's: %v", writes[i+1:])
	assert.Greater(t, parentToken, mustInt(t, childToken))
}

func expectLine(t *testing.T, lines <-chan string, prefix string) string {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the child exited before printing %q", prefix)
			if rest, found := strings.CutPrefix(l, prefix); found {
				return rest
			}
			require.False(t, strings.HasPrefix(l, "error"), "child: %s", l)
		case <-timeout:
			t.Fatalf("the child did not print %q within 15s", prefix)
		}
	}
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func mustInt(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return n
}
