// This file: what the test harnesses share: a free loopback
// port, a log buffer a server's process writes while tests read it, and a
// bounded wait for what a test or a fake waits on when it stops.

package httpx

import (
	"bytes"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// FreePort asks the kernel for a free port on 127.0.0.1. Another process
// may take it before the server binds it: callers retry a failed start.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// LockedWriter writes to W under Mu, so that a server's output and a test
// reading W do not race.
type LockedWriter struct {
	Mu *sync.Mutex
	W  *bytes.Buffer
}

// Write implements io.Writer.
func (l *LockedWriter) Write(p []byte) (int, error) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	return l.W.Write(p)
}

// AnnounceWriter returns the terminal, or stderr when there is none, and
// what closes it: a harness's one-line "skipped: install ..." notice must be
// seen without -v, and go test keeps a package's own output until it ends.
func AnnounceWriter() (io.Writer, func()) {
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return os.Stderr, func() {}
	}
	return tty, func() { _ = tty.Close() }
}

// WaitBound is how long [Within] waits: far past any wait of a working test,
// well inside the 60 s in which a failing test must say why.
const WaitBound = 30 * time.Second

// Within returns once wait has returned; past [WaitBound] it panics naming
// what it waited for, so that a hung Close or cleanup is reported as itself
// rather than as the test binary's timeout minutes later.
func Within(what string, wait func()) { within(WaitBound, what, wait) }

func within(bound time.Duration, what string, wait func()) {
	done := make(chan struct{})
	go func() { defer close(done); wait() }()
	select {
	case <-done:
	case <-time.After(bound):
		panic("still waiting after " + bound.String() + " for " + what)
	}
}
