//go:build unix

package pgstore_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/internal/testlog"
)

// child is the test binary re-executed to run one Test*Child function: a
// process the test can SIGKILL. Its stdout is read line by line (the child
// prints what it does there); its stderr is kept for failure messages.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr testlog.Buffer
	exited chan struct{} // closed once cmd is reaped

	mu    sync.Mutex
	lines []string
	poke  chan struct{} // a new line, or the end of stdout
	eof   bool
}

// startChild runs the test function named test in a new process of the test
// binary, with env added to this process's environment. The process is
// killed at the test's cleanup if it still runs.
func startChild(t *testing.T, test string, env ...string) *child {
	t.Helper()
	c := &child{t: t, exited: make(chan struct{}), poke: make(chan struct{}, 1)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.timeout=5m")
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			c.lines = append(c.lines, sc.Text())
			c.mu.Unlock()
			c.wake()
		}
		c.mu.Lock()
		c.eof = true
		c.mu.Unlock()
		c.wake()
		_ = c.cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(syscall.SIGCONT) // a stopped child cannot die of SIGKILL until continued
		_ = c.cmd.Process.Kill()
		httpx.Within("the killed child process to exit", func() { <-c.exited })
	})
	return c
}

func (c *child) wake() {
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

// waitLines waits until the child printed n lines that start with prefix
// (counting from the first line) or until timeout, and returns how many it
// printed by then.
func (c *child) waitLines(prefix string, n int, timeout time.Duration) int {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		got, eof := c.count(prefix)
		if got >= n || eof {
			return got
		}
		select {
		case <-c.poke:
		case <-deadline.C:
			got, _ := c.count(prefix)
			return got
		}
	}
}

// count returns how many lines start with prefix, and whether stdout ended.
func (c *child) count(prefix string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n, c.eof
}

// linesWith returns the rest of every line that starts with prefix.
func (c *child) linesWith(prefix string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, l := range c.lines {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			out = append(out, rest)
		}
	}
	return out
}

// kill sends SIGKILL and waits until the process is reaped; it fails the test
// if the child had exited by itself (a crash or a failed setup).
func (c *child) kill() {
	c.t.Helper()
	_ = c.cmd.Process.Kill()
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		c.t.Fatal("a SIGKILLed child was not reaped within 10s")
	}
	ws, _ := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(c.t, ws.Signaled() && ws.Signal() == syscall.SIGKILL,
		"the child was not killed but exited (%v):\n%s", c.cmd.ProcessState, c.output())
}

// alive reports whether the process has not exited.
func (c *child) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// output is what the child printed, for failure messages.
func (c *child) output() string {
	c.mu.Lock()
	out := strings.Join(c.lines, "\n")
	c.mu.Unlock()
	return out + "\n" + c.stderr.String()
}
