package main

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// steps records the order in which the shutdown steps ran.
type steps struct {
	mu  sync.Mutex
	log []string
}

func (s *steps) add(step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, step)
}

func (s *steps) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// TestStopAllJobsFirst: the jobs stop before the shards close, and both
// errors come back.
func TestStopAllJobsFirst(t *testing.T) {
	t.Parallel()
	var st steps
	errJobs, errShards := errors.New("jobs"), errors.New("shards")
	err := stopAll(
		func() error { st.add("jobs"); return errJobs },
		func() error { st.add("shards"); return errShards },
		time.Minute, time.Minute)
	assert.ErrorIs(t, err, errJobs)
	assert.ErrorIs(t, err, errShards)
	assert.Equal(t, []string{"jobs", "shards"}, st.get())
}

// TestStopAllSlowJobs: jobs that take longer than jobsFirst do not keep the
// shards open; stopAll still waits for the jobs, within the budget.
func TestStopAllSlowJobs(t *testing.T) {
	t.Parallel()
	var st steps
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- stopAll(
			func() error { <-release; st.add("jobs stopped"); return nil },
			func() error { st.add("shards closed"); return nil },
			time.Minute, 50*time.Millisecond)
	}()
	require.Eventually(t, func() bool { return slices.Contains(st.get(), "shards closed") }, 10*time.Second, time.Millisecond,
		"the shards waited for the jobs")
	select {
	case err := <-done:
		t.Fatalf("stopAll returned before the jobs stopped: %v", err)
	default:
	}
	close(release)
	require.NoError(t, <-done)
	assert.Equal(t, []string{"shards closed", "jobs stopped"}, st.get())
}

// TestStopAllBudget: jobs that never stop make stopAll return an error at the
// budget, with the shards closed all the same.
func TestStopAllBudget(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // the stuck step's goroutine ends with the test
	var st steps
	err := stopAll(
		func() error { <-release; return nil },
		func() error { st.add("shards closed"); return nil },
		300*time.Millisecond, 50*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the jobs did not stop")
	assert.Equal(t, []string{"shards closed"}, st.get())

	// And shards that never close.
	err = stopAll(func() error { return nil }, func() error { <-release; return nil }, 300*time.Millisecond, 50*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the shards did not close")
}

// TestShutdownBounds: a reward handler that honours its context is cancelled
// early enough for the shards to close within the budget, and the budget
// leaves the process time to exit within the 10 s SIGTERM allows.
func TestShutdownBounds(t *testing.T) {
	t.Parallel()
	const discordgoClose = time.Second // discordgo's Close sleeps a second
	assert.Less(t, pluginCloseTimeout, jobsFirst)
	assert.LessOrEqual(t, jobsFirst+discordgoClose, shutdownBudget-time.Second, "no margin for the shards")
	assert.LessOrEqual(t, shutdownBudget, 9*time.Second)
}
