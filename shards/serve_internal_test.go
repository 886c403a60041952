package shards

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/httpx"
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

// TestStopInOrderJobsFirst: the job stops before the shards close, and both
// errors come back.
func TestStopInOrderJobsFirst(t *testing.T) {
	t.Parallel()
	var st steps
	errJobs, errShards := errors.New("jobs"), errors.New("shards")
	err := stopInOrder(
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
	var st steps
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- stopInOrder(
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
	var st steps
	err := stopInOrder(
		func() error { <-release; return nil },
		func() error { st.add("shards closed"); return nil },
		300*time.Millisecond, 50*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the jobs did not stop")
	assert.Equal(t, []string{"shards closed"}, st.get())

	err = stopInOrder(func() error { return nil }, func() error { <-release; return nil }, 300*time.Millisecond, 50*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the shards did not close")
}
