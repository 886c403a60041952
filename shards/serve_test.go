package shards_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/shards"
)

// events records what happened, in order, from any goroutine.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) { e.mu.Lock(); defer e.mu.Unlock(); e.log = append(e.log, s) }
func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// TestServeStopsTheJobBeforeTheShards: Serve opens every shard against the
// fake Discord while the job runs; on the stop, the job's context ends while
// the gateway connections are still up, and they close only after it returned.
func TestServeStopsTheJobBeforeTheShards(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 2)
	var ev events
	for _, s := range w.group.Sessions() {
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.Ready) { ev.add("ready") })
		s.AddHandler(func(s *discordgo.Session, _ *discordgo.Disconnect) { ev.add("disconnected") })
	}
	ctx, stop := context.WithCancel(w.ctx())
	errJob := errors.New("job's error")
	served := async(func() error {
		return w.group.Serve(ctx, func(ctx context.Context) error {
			<-ctx.Done()
			ev.add("job stopped")
			return errJob
		}, shards.Shutdown{})
	})
	require.Eventually(t, func() bool { return len(ev.get()) == 2 }, quick, 10*time.Millisecond, "both shards' READY")
	stop()
	err := within(t, served, "Serve")
	require.ErrorIs(t, err, errJob)
	// discordgo runs each handler in its own goroutine: a Disconnect fired by
	// Close may be handled just after Serve returned.
	// A heartbeat that fails on the closing connection makes discordgo close,
	// and fire Disconnect, once more.
	require.Eventually(t, func() bool { return len(ev.get()) >= 5 }, quick, time.Millisecond, "both shards' Disconnect: %v", ev.get())
	got := ev.get()
	assert.Equal(t, []string{"ready", "ready", "job stopped"}, got[:3])
	assert.Equal(t, slices.Repeat([]string{"disconnected"}, len(got)-3), got[3:])
	require.NoError(t, w.group.Close(), "Close after Serve")
}

// TestServeJobFailure: a job failing while the shards run stops Serve, which
// returns its error and closes the shards; the misuses are errors.
func TestServeJobFailure(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	errJob := errors.New("state directory in use")
	err := within(t, async(func() error {
		return w.group.Serve(w.ctx(), func(context.Context) error { return errJob }, shards.Shutdown{})
	}), "Serve")
	require.ErrorIs(t, err, errJob)
	require.ErrorIs(t, w.group.Open(w.ctx()), shards.ErrClosed)

	assert.Error(t, w.group.Serve(w.ctx(), nil, shards.Shutdown{}))
	assert.Error(t, w.group.Serve(w.ctx(), func(context.Context) error { return nil }, shards.Shutdown{Budget: -1}))
	var zero shards.Group
	assert.Panics(t, func() { _ = zero.Serve(w.ctx(), func(context.Context) error { return nil }, shards.Shutdown{}) })
}

// TestApplication reads the fake Discord's application: its ID is the bot's.
func TestApplication(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	app, err := w.group.Application(w.ctx())
	require.NoError(t, err)
	assert.Equal(t, w.srv.BotUserID(), app.ID)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = w.group.Application(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// TestStopInOrderJobsFirst: the job stops before the shards close, and both
// errors come back.
func TestStopInOrderJobsFirst(t *testing.T) {
	t.Parallel()
	var st events
	errJobs, errShards := errors.New("jobs"), errors.New("shards")
	err := shards.StopInOrder(
		func() error { st.add("jobs"); return errJobs },
		func() error { st.add("shards"); return errShards },
		time.Minute, time.Minute)
	assert.ErrorIs(t, err, errJobs)
	assert.ErrorIs(t, err, errShards)
	assert.Equal(t, []string{"jobs", "shards"}, st.get())
}

// TestStopInOrderSlowJobs: a job that takes longer than jobsFirst does not
// keep the shards open; stopInOrder still waits for it, within the budget.
func TestStopInOrderSlowJobs(t *testing.T) {
	t.Parallel()
	var st events
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- shards.StopInOrder(
			func() error { <-release; st.add("jobs stopped"); return nil },
			func() error { st.add("shards closed"); return nil },
			time.Minute, 50*time.Millisecond)
	}()
	require.Eventually(t, func() bool { return slices.Contains(st.get(), "shards closed") }, 10*time.Second, time.Millisecond,
		"the shards waited for the jobs")
	select {
	case err := <-done:
		t.Fatalf("stopInOrder returned before the jobs stopped: %v", err)
	default:
	}
	close(release)
	var ranErr error
	httpx.Within("the job to return (<-done)", func() { ranErr = <-done })
	require.NoError(t, ranErr)
	assert.Equal(t, []string{"shards closed", "jobs stopped"}, st.get())
}

// TestStopInOrderBudget: a job that never stops makes stopInOrder return an
// error at the budget, with the shards closed all the same; and shards that
// never close, likewise.
func TestStopInOrderBudget(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // the stuck step's goroutine ends with the test
	var st events
	err := shards.StopInOrder(
		func() error { <-release; return nil },
		func() error { st.add("shards closed"); return nil },
		300*time.Millisecond, 50*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the jobs did not stop")
	assert.Equal(t, []string{"shards closed"}, st.get())

	err = shards.StopInOrder(func() error { return nil }, func() error { <-release; return nil }, 300*time.Millisecond, 50*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the shards did not close")
}
