// This file: what the harnesses that start real servers share: the rule for
// a missing binary, and [Proc], one server process started, awaited, killed
// and restarted by PID.

package testlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dblkit/go-topgg/internal/httpx"
)

// Need ends t if missing (a server binary not found) is not nil: t.Fatal when
// the CI environment variable is set (CI never skips), else t.Skip naming the
// Debian package deb to install.
func Need(t testing.TB, missing error, deb string) {
	t.Helper()
	if missing == nil {
		return
	}
	msg := fmt.Sprintf("%v; install: apt-get install %s to run the tests that need it", missing, deb)
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: they must not be skipped)")
	}
	t.Skip(msg)
}

// LookPath returns the path of bin, or ends t as [Need] does.
func LookPath(t testing.TB, bin, deb string) string {
	t.Helper()
	path, err := exec.LookPath(bin)
	Need(t, err, deb)
	return path
}

// Announce is for the TestMain of package pkg, whose tests [Need] what
// missing says is not found (nil: nothing to say). One line says that they
// are skipped and to install the Debian package deb, or under CI that the
// package fails, and then Announce returns false. The line goes to /dev/tty
// when there is one: go test shows a passing package's output only with -v.
func Announce(pkg string, missing error, deb string) bool {
	if missing == nil {
		return true
	}
	w := io.Writer(os.Stderr)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		w = tty
	}
	return announce(w, pkg, os.Getenv("CI") != "", missing, deb)
}

func announce(w io.Writer, pkg string, ci bool, missing error, deb string) bool {
	skip := "are skipped (go test -v lists them)"
	if ci {
		pkg, skip = pkg+": FAIL", "must not be skipped: CI is set"
	}
	_, _ = fmt.Fprintf(w, "%s: %v; the tests that need it %s; install: apt-get install %s\n", pkg, missing, skip, deb)
	return !ci
}

// StartBound bounds a server's start: the wait until it answers, and the
// retries of a restart on a port that lingers.
const StartBound = 60 * time.Second

// Proc is one server process owned by a test harness, run in Dir on one
// 127.0.0.1 port for its life, in a process group of its own that dies with
// the test binary; its output is kept for failure messages. Its methods are
// safe for concurrent use once Start returned.
type Proc struct {
	Name  string                          // the server, in messages
	Dir   string                          // its working directory
	Cmd   func() *exec.Cmd                // the command that serves [Proc.Port]
	Ready func(ctx context.Context) error // nil once the server answers

	port int
	out  lockedBuffer
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd is reaped and every process that had its output has exited
}

// Start starts the server on a free port, trying another if it cannot start
// there (someone took the port), and waits (bounded) until it is Ready.
func (p *Proc) Start() error {
	var err error
	for range 5 {
		if p.port, err = httpx.FreePort(); err != nil {
			return err
		}
		if err = p.start(); err == nil {
			return nil
		}
	}
	return err
}

// Port returns the server's port.
func (p *Proc) Port() int { return p.port }

// Addr returns the server's host:port.
func (p *Proc) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// Logs returns what the server printed so far, restarts included.
func (p *Proc) Logs() string { return p.out.String() }

func (p *Proc) start() error {
	cmd := p.Cmd()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pdeathsig = true, syscall.SIGKILL
	cmd.Dir, cmd.Stdout, cmd.Stderr = p.Dir, &p.out, &p.out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), StartBound)
	defer cancel()
	for {
		err := p.Ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-done:
			err = errors.New(p.Name + " exited before it answered")
		case <-ctx.Done():
			err = fmt.Errorf("%s did not answer within %v: %w", p.Name, StartBound, err)
		case <-time.After(20 * time.Millisecond): // poll interval of a bounded readiness wait
			continue
		}
		p.Kill()
		return fmt.Errorf("%w; output:\n%s", err, p.Logs())
	}
}

// Signal sends sig to the server, if it runs (SIGSTOP pauses it: it keeps
// its connections but answers nothing until SIGCONT; Kill ends it too).
func (p *Proc) Signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// Kill SIGKILLs the server, its process group and its children, and waits
// (bounded) until they are gone: no shutdown, no final fsync, as when a
// machine loses the process.
func (p *Proc) Kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	// Stopped, the server forks no more; its children may lead groups of
	// their own (PostgreSQL's backends do).
	pid := cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	for _, c := range strings.Fields(string(children)) {
		if n, err := strconv.Atoi(c); err == nil {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	httpx.Within(p.Name+" and its children to exit after SIGKILL", func() { <-done })
}

// Restart starts the server again on its port (killing it first if it
// runs) and waits until it is Ready; a port that lingers after the kill is
// retried within [StartBound].
func (p *Proc) Restart() error {
	p.Kill()
	deadline := time.Now().Add(StartBound)
	for {
		err := p.start()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond) // a bounded retry of a failed start
	}
}

// Stop asks the server to shut down with sig and kills it if it is not gone
// within 10 s.
func (p *Proc) Stop(sig syscall.Signal) {
	p.Signal(sig)
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done != nil { // started
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	}
	p.Kill()
}

// lockedBuffer is a server's output, written by its process while a test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
