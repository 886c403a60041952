package commands_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/commands"
	"github.com/dblkit/go-topgg/internal/clock"
	"github.com/dblkit/go-topgg/internal/testlog"
)

// TestOnResultPanicIsContained: an OnResult that panics at every call
// neither ends Run nor changes what the Job does (one publish, then an
// unchanged check each interval); the log names the callback, without a
// stack.
func TestOnResultPanicIsContained(t *testing.T) {
	t.Parallel()
	srv, c := newService(t)
	var logs testlog.Buffer
	var calls atomic.Int32
	clk := clock.NewFake(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	cfg := commands.JobConfig{Commands: botCommands(), Logger: logs.Logger(), OnResult: func(context.Context, commands.Result, error) {
		calls.Add(1)
		panic("dashboard bug")
	}}
	job, err := commands.NewJob(newSyncer(t, c, commands.Config{}), commands.WithJobClock(cfg, clk))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- job.Run(ctx) }()
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return clk.Timers() == 1 }, 5*time.Second, time.Millisecond, "Run goes on to its next interval")
	clk.Advance(commands.DefaultJobInterval)
	require.Eventually(t, func() bool { return calls.Load() == 2 }, 5*time.Second, time.Millisecond)
	assert.Len(t, putBodies(srv), 1)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	assert.Equal(t, 2, strings.Count(logs.String(), "OnResult panicked"))
	assert.Contains(t, logs.String(), "dashboard bug")
	assert.NotContains(t, logs.String(), "goroutine ")
}
