package plugin_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/redistest"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

// resumedRounds is how many times in a row the resumed-leader test pauses
// and resumes a leader; maxRounds bounds the attempts, as a round where the
// resumed process wins a new term at once proves nothing and is not counted.
const (
	resumedRounds = 20
	maxRounds     = 30
)

// child is one process of the test's fleet (childMain), and what it printed.
type child struct {
	name   string
	cmd    *exec.Cmd
	stderr testlog.Buffer
	exited chan struct{} // closed once the process is reaped

	mu    sync.Mutex
	lines []line
}

type line struct {
	text string
	at   time.Time // when the test read it
}

// startChild runs the test binary as the fleet process name with env.
func startChild(t *testing.T, name string, env []string) *child {
	t.Helper()
	c := &child{name: name, exited: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(append(os.Environ(), childEnv+"="+name), env...)
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			c.lines = append(c.lines, line{sc.Text(), time.Now()})
			c.mu.Unlock()
		}
		_ = c.cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(syscall.SIGCONT)
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(15 * time.Second):
			_ = c.cmd.Process.Kill()
			httpx.Within("the killed child process to exit", func() { <-c.exited })
		}
		if t.Failed() {
			c.mu.Lock()
			var out strings.Builder
			for _, l := range c.lines {
				fmt.Fprintf(&out, "%s %s\n", l.at.Format("15:04:05.000"), l.text)
			}
			c.mu.Unlock()
			t.Logf("%s's stdout:\n%s\nstderr:\n%s", c.name, out.String(), c.stderr.String())
		}
	})
	return c
}

// printed counts the lines starting with prefix read at or after since, and
// fails the test on a line that reports an error.
func (c *child) printed(t *testing.T, prefix string, since time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.lines {
		assert.False(t, strings.HasPrefix(l.text, "error"), "%s: %s", c.name, l.text)
		if !l.at.Before(since) && strings.HasPrefix(l.text, prefix) {
			n++
		}
	}
	return n
}

func (c *child) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(sig), "%v to %s", sig, c.name)
}

// request is one request a process sent, as a fake received it.
type request struct {
	what   string    // "topgg GET /path" or "discord PUT /path"
	sentAt time.Time // when it reached the sender's HTTP transport
}

// sent lists the requests the fakes received from process name: Top.gg's
// and Discord's REST.
func sent(tg *topggtest.Server, dc *discordtest.Server, name string) []request {
	var out []request
	add := func(h http.Header, what string) {
		if h.Get(senderHeader) == name {
			ns, _ := strconv.ParseInt(h.Get(sentAtHeader), 10, 64)
			out = append(out, request{what, time.Unix(0, ns)})
		}
	}
	for _, r := range tg.Requests() {
		add(r.Header, "topgg "+r.Method+" "+r.Path)
	}
	for _, c := range dc.Requests() {
		add(c.Header, "discord "+c.Method+" "+c.Path)
	}
	return out
}

// TestResumedLeaderActsNot runs a bot as three processes of a fleet (this
// test binary, one shard each, every job on: posts and polls every 100 ms,
// one handler call at a time, lease TTL 1 s) against one redis-server, the
// fake Top.gg and the fake Discord, which record who sent each request. In
// each round, three votes come in; the leader's reward handler gives the
// first voter a role and then waits on a gate file, and fails the second
// voter's first call: the leader is held with a handler call (the third
// vote's), a retry (the second's), a post and a poll due. The test stops
// the leader (SIGSTOP) and, once another process leads, opens the gate and
// resumes it (SIGCONT) with its deadline long past: from then on it sends no
// request of any kind, to Top.gg or Discord, while it has not won a new term
// (its handler returns, but the next call, the retry, the post and the poll
// all find the term over). The new leader rewards the round's voters. Twenty rounds
// in a row, alternating leaders.
func TestResumedLeaderActsNot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet of processes for about 30 s (not with -short)")
	}
	// Not parallel: the lease's 1 s TTL wants the CPU the other tests take.
	began := time.Now()
	srv := redistest.Start(t)
	const shards = 3
	var guilds []string
	for shard := range shards {
		guilds = append(guilds, discordtest.GuildIDForShard(0, shard, shards))
	}
	dc, err := discordtest.NewServer(discordtest.WithShardCount(shards), discordtest.WithGuilds(guilds...))
	require.NoError(t, err)
	t.Cleanup(dc.Close)
	project := topggtest.DiscordBot()
	project.PlatformID = dc.BotUserID()
	tg, err := topggtest.NewServer(topggtest.WithProject(project))
	require.NoError(t, err)
	t.Cleanup(tg.Close)
	gates := t.TempDir()
	env := []string{childRedisEnv + "=" + srv.URL(), childTopggEnv + "=" + tg.URL, childTopggTokEnv + "=" + tg.Token(),
		childDiscordEnv + "=" + strings.TrimPrefix(dc.URL, "http://"), childDiscordTok + "=" + dc.Token(),
		childGatesEnv + "=" + gates, childGuildEnv + "=" + guilds[0]}
	procs := map[string]*child{}
	for i := range shards {
		name := fmt.Sprintf("p%d", i)
		procs[name] = startChild(t, name, append([]string{fmt.Sprintf("%s=%d/%d", childShardEnv, i, shards)}, env...))
	}
	t.Cleanup(func() { // first (cleanups run last first): all stop at once, then each is waited for
		for _, c := range procs {
			_ = c.cmd.Process.Signal(syscall.SIGCONT)
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
		}
	})
	until(t, procs, 30*time.Second, func() bool { return len(tg.Metrics()) > 0 }, "the fleet never posted its total")
	t.Logf("fleet up in %v", time.Since(began).Round(time.Millisecond))

	done := 0
	var window atomic.Int32 // requests in the window: checked before a stop, received after it
	for k := 1; done < resumedRounds; k++ {
		require.LessOrEqual(t, k, maxRounds, "only %d of %d rounds proved anything", done, resumedRounds)
		counts := resumedRound(t, k, tg, dc, procs, gates, &window)
		if t.Failed() {
			t.Fatalf("round %d failed (after %d good rounds)", k, done)
		}
		if counts {
			done++
		}
	}
	t.Logf("%d rounds in %v; %d request(s) in the window", done, time.Since(began).Round(time.Millisecond), window.Load())
}

// resumedRound runs round k (see TestResumedLeaderActsNot) and reports
// whether it counts: false when the resumed process won a new term within
// the round, which makes its requests allowed.
func resumedRound(t *testing.T, k int, tg *topggtest.Server, dc *discordtest.Server, procs map[string]*child, gates string,
	window *atomic.Int32) bool {
	votes := roundVotes(k, 3)
	tg.AddVote(votes...)
	gate := gateOf(votes[0].PlatformID)
	var leader *child
	until(t, procs, 10*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(gates, "entered-"+gate))
		leader = procs[string(b)]
		return err == nil && leader != nil
	}, "round %d: no leader called the reward handler", k)

	// The second vote's first call failed in the same leader: its retry
	// is due while the leader is stopped.
	until(t, procs, 10*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(gates, "failed-"+gate))
		return err == nil && string(b) == leader.name
	}, "round %d: the leader's handler did not fail the second vote", k)
	stopped := time.Now()
	leader.signal(t, syscall.SIGSTOP)
	until(t, procs, 10*time.Second, func() bool {
		for _, c := range procs {
			if c != leader && c.printed(t, "leader ", stopped) > 0 {
				return true
			}
		}
		return false
	}, "round %d: nobody took over from the stopped %s", k, leader.name)
	took := time.Since(stopped)
	require.NoError(t, os.WriteFile(filepath.Join(gates, "open-"+gate), nil, 0o600))
	// Every 100 ms timer of the stopped leader (post, poll) is due by now,
	// and whatever it sent before the stop has reached the fakes.
	before := len(sent(tg, dc, leader.name))

	resumed := time.Now()
	leader.signal(t, syscall.SIGCONT)
	until(t, procs, 10*time.Second, func() bool { return leader.printed(t, "follower", resumed) > 0 },
		"round %d: the resumed %s never saw its term end", k, leader.name)
	// What a resumed leader sends, it sends at once; give its jobs three of
	// their intervals all the same.
	time.Sleep(3 * childInterval)
	if leader.printed(t, "leader ", resumed) > 0 {
		t.Logf("round %d: %s won a new term right after it resumed; not counted", k, leader.name)
		return false
	}
	var late []string
	for _, r := range sent(tg, dc, leader.name)[before:] {
		if r.sentAt.After(resumed) {
			late = append(late, r.what)
			continue
		}
		// Handed to the transport before the stop (its check passed
		// then), written after: the window the fleet doc states.
		window.Add(1)
		t.Logf("round %d: %s's %s was in the window: checked before the stop, sent after", k, leader.name, r.what)
	}
	assert.Empty(t, late, "round %d: %s sent requests after it resumed past its term", k, leader.name)

	for _, v := range votes {
		until(t, procs, 10*time.Second, func() bool { return len(dc.MemberRoles(dcGuild(t, dc), v.PlatformID)) > 0 },
			"round %d: voter %s never rewarded by the new leader", k, v.PlatformID)
	}
	t.Logf("round %d: stopped %s; another process led %v later", k, leader.name, took.Round(time.Millisecond))
	return true
}

// until waits for cond, checked every millisecond, at most timeout, and
// fails the test with msg if it is not met, or at once if a process of the
// fleet exited.
func until(t *testing.T, procs map[string]*child, timeout time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		for _, c := range procs {
			select {
			case <-c.exited:
				t.Fatalf("%s exited: "+msg, append([]any{c.name}, args...)...)
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: "+msg, append([]any{timeout}, args...)...)
		}
		time.Sleep(time.Millisecond)
	}
}

// dcGuild is the guild the children give roles in (the first shard's).
func dcGuild(t *testing.T, dc *discordtest.Server) string {
	t.Helper()
	return discordtest.GuildIDForShard(0, 0, dc.ShardCount())
}
