package plugin

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testlog"
)

// TestSuperviseStopIsBoundedWhenAJobIgnoresItsContext: a job that blocks on a
// channel and never looks at its context holds the supervisor's return for
// stopWait on its clock, not for ever; the job's late error is dropped (no
// restart, nothing logged after the return).
func TestSuperviseStopIsBoundedWhenAJobIgnoresItsContext(t *testing.T) {
	t.Parallel()
	fake := newFake()
	var logs testlog.Buffer
	const stopWait = time.Minute
	s := supervisor{log: slog.New(slog.NewTextHandler(&logs, nil)), clock: fake, stopWait: stopWait}
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	jobDone := make(chan struct{})
	t.Cleanup(func() { unblock(); <-jobDone }) // the job left behind ends before goleak looks
	var r runs
	ctx, cancel := context.WithCancel(context.Background())
	done := superviseAsync(ctx, s, func(context.Context) error {
		defer close(jobDone)
		r.add()
		<-release // ignores ctx
		return errors.New("late failure")
	})
	require.Eventually(t, func() bool { return r.count() == 1 }, testWait, testTick)
	cancel()
	// The supervisor waits on its clock: not before stopWait...
	require.Eventually(t, func() bool { return fake.Timers() == 1 }, testWait, testTick)
	fake.Advance(stopWait - time.Second)
	select {
	case <-done:
		t.Fatal("the supervisor returned before stopWait")
	case <-time.After(50 * time.Millisecond):
	}
	// ...and at it.
	fake.Advance(time.Second)
	require.NoError(t, waitDone(t, done, "a job ignoring its context held the stop"))
	assert.Contains(t, logs.String(), "job ignored the stop")
	assert.Contains(t, logs.String(), "test-job")

	unblock()
	<-jobDone
	assert.Equal(t, 1, r.count(), "not restarted")
	assert.Equal(t, 0, strings.Count(logs.String(), "late failure"), "the late result is dropped")
}
