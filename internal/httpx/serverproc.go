// This file: what the fakes and harnesses share: a free loopback port and a
// bounded wait. The process runner is testlog's (it needs package testing,
// which no library code may link).

package httpx

import (
	"net"
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
