package redistest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

// installHint says how to get redis-server on the Debian and Ubuntu machines
// the project runs on.
const installHint = "install: apt-get install redis-server"

// Announce is for the TestMain of a package whose tests need redis-server;
// pkg names the package. With redis-server in PATH it says nothing and
// returns true. Without it, it says in one line that the package's Redis
// tests are skipped and how to install redis-server, and returns true; when
// the CI environment variable is set, the line says the package fails and
// Announce returns false: TestMain then exits with status 1 (CI must run
// every test, never skip one silently).
//
// go test shows the output of a package that passes only with -v, so the
// line goes to the terminal (/dev/tty) when there is one, and to stderr
// otherwise (a CI log, or a run without a terminal).
func Announce(pkg string) bool {
	if _, err := exec.LookPath(Binary); err == nil {
		return true
	}
	w, closeW := announceWriter()
	defer closeW()
	return announce(w, pkg, os.Getenv("CI") != "")
}

// announce writes the line for a missing redis-server and reports whether
// the tests may run.
func announce(w io.Writer, pkg string, ci bool) bool {
	if ci {
		_, _ = fmt.Fprintf(w, "%s: FAIL: %s not found in PATH and CI is set: the Redis tests must not be skipped; %s\n",
			pkg, Binary, installHint)
		return false
	}
	_, _ = fmt.Fprintf(w, "%s: %s not found in PATH; the tests that need it are skipped (go test -v lists them); %s\n",
		pkg, Binary, installHint)
	return true
}

// announceWriter returns the terminal, or stderr when there is none.
func announceWriter() (io.Writer, func()) {
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return os.Stderr, func() {}
	}
	return tty, func() { _ = tty.Close() }
}
