// Package testlog gives tests a log sink that the code under test may write from
// its own goroutines while the test reads it, and the runner of the real servers
// (redis-server, PostgreSQL) the harnesses start, and of the test binary run
// again as a child process.
package testlog

import (
	"bytes"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writers and readers. The zero
// value is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Logger returns a debug-level text logger that writes to b.
func (b *Buffer) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// PrintVerbs are the fmt verbs a value holding a secret is printed with in
// the redaction tests: fmt prints a nested pointer field by field under a
// verb that does not fit it (%s, %q, %x, %d), so all of them are tried.
var PrintVerbs = [...]string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T", "%p"}

// PrintAll returns what every value prints under each of PrintVerbs, then
// what slog's text handler writes for all of them as attributes, and its
// JSON handler for those that are a slog.LogValuer or a pointer: one text
// for a test to search for a secret. (A slice or struct value without
// LogValue is left out of JSON, which cannot encode the funcs a session
// holds: json.Marshal fails on it rather than leak.)
func PrintAll(values ...any) string {
	var b bytes.Buffer
	var all, js []any
	for i, v := range values {
		for _, verb := range PrintVerbs {
			fmt.Fprintf(&b, verb+"\n", v)
		}
		key := fmt.Sprint("v", i)
		all = append(all, key, v)
		if _, ok := v.(slog.LogValuer); ok || reflect.ValueOf(v).Kind() == reflect.Pointer {
			js = append(js, key, v)
		}
	}
	slog.New(slog.NewTextHandler(&b, nil)).Info("print", all...)
	slog.New(slog.NewJSONHandler(&b, nil)).Info("print", js...)
	return b.String()
}

// PrintWhile prints values as PrintAll does, again and again until write,
// run on its own goroutine, returns, and returns the last print: under -race,
// a value whose printing reads the state write changes is a data race.
func PrintWhile(write func(), values ...any) string {
	done := make(chan struct{})
	go func() { defer close(done); write() }()
	for {
		out := PrintAll(values...)
		select {
		case <-done:
			return out
		default:
		}
	}
}
