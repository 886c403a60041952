package testkit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Run is a job's Run(ctx) running in its own goroutine.
type Run struct {
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// Start runs run in its own goroutine until Stop or the end of the test,
// when its error must be nil.
func Start(t testing.TB, run func(context.Context) error) *Run {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- run(ctx) }()
	t.Cleanup(func() { assert.NoError(t, r.Stop()) })
	return r
}

// Stop cancels the run and returns its error once it returned; a run that
// does not return within Wait is an error. Safe to call more than once, from
// any goroutine.
func (r *Run) Stop() error {
	r.once.Do(func() {
		r.cancel()
		select {
		case r.err = <-r.done:
		case <-time.After(Wait):
			r.err = errors.New("Run did not return after its context was cancelled")
		}
	})
	return r.err
}

// Runs keeps the runs of several jobs by key, for tests that stop one of
// them; the zero value is ready to use and safe for concurrent use.
type Runs[K comparable] struct {
	mu sync.Mutex
	m  map[K]*Run
}

// Start runs run under key k until Stop(k) or the end of the test.
func (rs *Runs[K]) Start(t testing.TB, k K, run func(context.Context) error) {
	r := Start(t, run)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[K]*Run{}
	}
	rs.m[k] = r
}

// Stop stops the run of k (see Run.Stop); nil if none was started.
func (rs *Runs[K]) Stop(k K) error {
	rs.mu.Lock()
	r := rs.m[k]
	rs.mu.Unlock()
	if r == nil {
		return nil
	}
	return r.Stop()
}

// Recv returns the next value from ch, and fails the test if none comes
// within Wait; what says what did not happen. Call it on the test goroutine.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Wait):
		t.Fatal(what)
		var zero T
		return zero
	}
}
