// Package serverproc holds what the test harnesses that start real servers
// (internal/redistest, internal/pgtest) share: a free loopback port and a
// log buffer the server's process writes while tests read it.
package serverproc

import (
	"bytes"
	"io"
	"net"
	"os"
	"sync"
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
