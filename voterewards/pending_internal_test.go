package voterewards

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPendingReportsArriveInOrder: two goroutines change the pending count
// and report outside the lock; the one that reports last may hold the older
// count. That report is dropped, so the observer's last count is the true one.
func TestPendingReportsArriveInOrder(t *testing.T) {
	t.Parallel()
	var got []int
	p := &Poller{cfg: Config{Observer: func(e Event) { got = append(got, e.Pending) }}}
	r := &run{p: p}
	r.delivery.init(1)
	r.lmu.Lock()
	first := r.changePending(1)  // 1
	second := r.changePending(1) // 2
	third := r.changePending(-1) // 1
	r.lmu.Unlock()
	r.report(first)
	r.report(third)
	r.report(second) // late: dropped
	assert.Equal(t, []int{1, 1}, got)
	assert.Equal(t, 1, r.pending)
}
