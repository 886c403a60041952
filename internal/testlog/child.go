// This file: [Child], the test binary run again as a process a test can
// stop, kill and read line by line.

package testlog

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// Child is the test binary run again as a child process. What it prints on
// stdout is read line by line as it comes; its stderr is kept for failure
// messages. Its methods are safe for concurrent use.
type Child struct {
	Name string // the process, in messages

	cmd    *exec.Cmd
	stderr Buffer
	exited chan struct{} // closed once cmd is reaped

	mu    sync.Mutex
	lines []Line
	more  chan struct{} // closed at the next line or the end of stdout; nil once stdout ended
}

// Line is one line a [Child] printed, and when the test read it.
type Line struct {
	Text string
	At   time.Time
}

// StartChild starts the test binary as the process name, running the test
// function named test ("": none, for a TestMain that runs the child itself
// when env says so), with env added to this process's environment. The
// child is killed at t's cleanup if it still runs.
func StartChild(t *testing.T, name, test string, env ...string) *Child {
	t.Helper()
	run := "^$"
	if test != "" {
		run = "^" + test + "$"
	}
	c := &Child{Name: name, exited: make(chan struct{}), more: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run="+run, "-test.count=1", "-test.timeout=5m")
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start(), "start %s", name)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.add(&Line{sc.Text(), time.Now()})
		}
		c.add(nil)
		_ = c.cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() { _ = c.Kill() })
	return c
}

// add appends l (nil: stdout ended) and wakes the waiters.
func (c *Child) add(l *Line) {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.more)
	c.more = nil
	if l != nil {
		c.lines = append(c.lines, *l)
		c.more = make(chan struct{})
	}
}

// Lines returns the lines printed so far that start with prefix, prefix cut.
func (c *Child) Lines(prefix string) []Line {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Line
	for _, l := range c.lines {
		if rest, ok := strings.CutPrefix(l.Text, prefix); ok {
			out = append(out, Line{rest, l.At})
		}
	}
	return out
}

// WaitLines waits until the child printed n lines that start with prefix,
// its stdout ended, or timeout passed, and returns how many it printed.
func (c *Child) WaitLines(prefix string, n int, timeout time.Duration) int {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		more := c.more
		c.mu.Unlock()
		got := len(c.Lines(prefix))
		if got >= n || more == nil {
			return got
		}
		select {
		case <-more:
		case <-deadline.C:
			return len(c.Lines(prefix))
		}
	}
}

// Signal sends sig to the child (SIGSTOP pauses it until SIGCONT).
func (c *Child) Signal(sig syscall.Signal) error { return c.cmd.Process.Signal(sig) }

// Alive reports whether the child has not exited.
func (c *Child) Alive() bool { return !c.Wait(0) }

// Wait waits at most timeout until the child exited, and reports whether it
// did.
func (c *Child) Wait(timeout time.Duration) bool {
	select {
	case <-c.exited:
		return true
	default:
	}
	select {
	case <-c.exited:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Kill SIGKILLs the child, stopped or not, and waits until it is reaped. It
// returns an error, with the child's output, if the child had exited by
// itself rather than of a SIGKILL; called again, it returns the same.
func (c *Child) Kill() error {
	_ = c.cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies of SIGKILL only once continued
	_ = c.cmd.Process.Kill()
	httpx.Within(c.Name+" to exit after SIGKILL", func() { <-c.exited })
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return nil
	}
	return fmt.Errorf("%s was not killed but exited (%v):\n%s", c.Name, c.cmd.ProcessState, c.Output())
}

// Output returns what the child printed, each stdout line with the time it
// was read, for failure messages.
func (c *Child) Output() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s's stdout:\n", c.Name)
	for _, l := range c.Lines("") {
		fmt.Fprintf(&b, "%s %s\n", l.At.Format("15:04:05.000"), l.Text)
	}
	return b.String() + "stderr:\n" + c.stderr.String()
}
