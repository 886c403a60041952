package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/dblkit/go-topgg/internal/redistest"
)

// botBinary is the example bot built once by TestMain for the end-to-end
// tests; empty under -short, where they are skipped.
var botBinary string

// TestMain builds the bot (unless -short), runs the tests, and fails the
// package if a test left a goroutine behind (the in-process demo included).
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if !redistest.Announce("example-bot") {
		return 1
	}
	if !testing.Short() {
		dir, err := os.MkdirTemp("", "example-bot-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if botBinary, err = build(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := pg.Main(m) // m.Run, then the package's PostgreSQL stopped
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			return 1
		}
	}
	return code
}

// build compiles this package into dir with the go command that runs the
// tests (go test puts its GOROOT/bin first on PATH).
func build(dir string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the example bot: %w", err)
	}
	out := filepath.Join(dir, "example-bot")
	cmd := exec.Command(gobin, "build", "-o", out, ".")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the example bot: %w\n%s", err, msg)
	}
	return out, nil
}
